//! Reading a sharding's text (XLA's `HloParserImpl::ParseSharding` and its
//! named-sharding branch): one pass over the bytes with a cursor, every error
//! a message at a byte offset. Fields XLA prints that say nothing about the
//! devices (`metadata={...}`, unknown `key=value` pairs) are kept or skipped.

use super::named::{AxisRef, Body, DeviceIds, DimSharding, Mesh, NamedSharding};
use super::tile_assignment::{Iota, TileAssignment};
use super::{build, Kind, Leaf, ShardGroup, Sharding, Subgroup};

/// Why a sharding could not be read, at a byte offset of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

/// Reads `{...}`: a v2 sharding, a named one, or a tuple of them.
pub fn parse(text: &str) -> Result<Sharding, ParseError> {
    let mut c = Cursor { text, at: 0 };
    let sharding = c.sharding(0)?;
    c.space();
    if c.at != text.len() {
        return c.fail("unexpected text after the sharding");
    }
    Ok(sharding)
}

/// Tuples nest no deeper than this (the text is not trusted).
const MAX_DEPTH: usize = 64;

struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

type Parsed<T> = Result<T, ParseError>;

impl<'a> Cursor<'a> {
    fn fail<T>(&self, message: impl Into<String>) -> Parsed<T> {
        Err(ParseError {
            offset: self.at,
            message: message.into(),
        })
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn space(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.at += rest.len() - trimmed.len();
            // `/*index=5*/` between tuple elements.
            if trimmed.starts_with("/*") {
                match trimmed.find("*/") {
                    Some(end) => self.at += end + 2,
                    None => return,
                }
            } else {
                return;
            }
        }
    }

    /// Skips spaces, then takes `token` if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.space();
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Parsed<()> {
        if self.eat(token) {
            Ok(())
        } else {
            self.fail(format!("expected `{token}`"))
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.rest().bytes().next()
    }

    fn integer(&mut self) -> Parsed<i64> {
        self.space();
        let rest = self.rest();
        let len = rest
            .char_indices()
            .take_while(|&(i, ch)| ch.is_ascii_digit() || (i == 0 && ch == '-'))
            .count();
        match rest[..len].parse::<i64>() {
            Ok(v) => {
                self.at += len;
                Ok(v)
            }
            Err(_) => self.fail("expected an integer"),
        }
    }

    /// `a,b,c` up to (not including) a byte that is not part of it.
    fn integers(&mut self) -> Parsed<Vec<i64>> {
        let mut out = vec![self.integer()?];
        while self.peek() == Some(b',') && self.digit_after_comma() {
            self.at += 1;
            out.push(self.integer()?);
            if out.len() as i64 > super::tile_assignment::MAX_DEVICES {
                return self.fail("too many devices");
            }
        }
        Ok(out)
    }

    fn digit_after_comma(&self) -> bool {
        self.rest()[1..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit() || c == '-')
    }

    /// `[a,b,...]` (possibly empty).
    fn bracketed(&mut self) -> Parsed<Vec<i64>> {
        self.expect("[")?;
        if self.eat("]") {
            return Ok(vec![]);
        }
        let values = self.integers()?;
        self.expect("]")?;
        Ok(values)
    }

    /// A word of letters, digits and `_`.
    fn word(&mut self) -> &'a str {
        self.space();
        let rest = self.rest();
        let len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        self.at += len;
        &rest[..len]
    }

    /// A balanced `{...}` (quotes respected), returned whole.
    fn balanced(&mut self) -> Parsed<&'a str> {
        self.space();
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut quoted = false;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if quoted => i += 1,
                b'"' => quoted = !quoted,
                b'{' if !quoted => depth += 1,
                b'}' if !quoted => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.at = i + 1;
                        return Ok(&self.text[start..self.at]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.fail("unclosed `{`")
    }

    fn sharding(&mut self, depth: usize) -> Parsed<Sharding> {
        if depth > MAX_DEPTH {
            return self.fail("tuple shardings nested too deep");
        }
        self.expect("{")?;
        match self.peek() {
            Some(b'{') => self.tuple(depth),
            Some(b'}') => {
                self.at += 1;
                Ok(Sharding::Tuple(vec![]))
            }
            _ if self.rest().starts_with("mesh[") || self.rest().starts_with("maximal_mesh[") => {
                Ok(Sharding::Named(Box::new(self.named()?)))
            }
            _ => Ok(Sharding::Leaf(self.leaf()?)),
        }
    }

    fn tuple(&mut self, depth: usize) -> Parsed<Sharding> {
        let mut elements = vec![self.sharding(depth + 1)?];
        while self.eat(",") {
            elements.push(self.sharding(depth + 1)?);
        }
        self.expect("}")?;
        Ok(Sharding::Tuple(elements))
    }

    /// The words of a v2 sharding up to its `}`.
    fn leaf(&mut self) -> Parsed<Leaf> {
        let start = self.at;
        let mut whole: Option<Kind> = None;
        let mut maximal = false;
        let mut device = None;
        let mut tiles: Option<TileAssignment> = None;
        let mut last_replicate = false;
        let mut last_dims: Vec<Subgroup> = vec![];
        let mut shard_group = None;
        let mut metadata = None;
        loop {
            if self.eat("}") {
                break;
            }
            if self.eat(",") {
                continue;
            }
            let word_at = self.at;
            let word = self.word();
            match word {
                "" => return self.fail("expected a sharding field or `}`"),
                "replicated" => whole = Some(Kind::Replicated),
                "manual" => whole = Some(Kind::Manual),
                "unknown" => whole = Some(Kind::Unknown),
                "unreduced" => whole = Some(Kind::Unreduced),
                "maximal" => maximal = true,
                "device" => {
                    self.expect("=")?;
                    device = Some(self.integer()?);
                }
                "devices" => {
                    self.expect("=")?;
                    tiles = Some(self.tile_assignment()?);
                }
                "last_tile_dim_replicate" => last_replicate = true,
                "last_tile_dims" => {
                    self.expect("=")?;
                    last_dims = self.subgroup_types()?;
                }
                "shard_as" | "shard_like" => {
                    shard_group = Some(ShardGroup {
                        id: self.integer()?,
                        shard_as: word == "shard_as",
                    })
                }
                "metadata" => {
                    self.expect("=")?;
                    metadata = Some(self.balanced()?.to_string());
                }
                _ => {
                    // A field XLA may print that says nothing of devices.
                    if self.eat("=") {
                        self.skip_value()?;
                    }
                    let _ = word_at;
                }
            }
        }
        let kind = match (whole, maximal, tiles) {
            (Some(kind), _, _) => kind,
            (None, true, _) => match device {
                Some(d) => Kind::Maximal(d),
                None => {
                    self.at = start;
                    return self.fail("`maximal` needs `device=N`");
                }
            },
            (None, false, Some(tiles)) => {
                if last_replicate {
                    build::partial_tile(tiles)
                } else if !last_dims.is_empty() {
                    if last_dims.len() > tiles.dims.len() {
                        self.at = start;
                        return self.fail("more subgroup kinds than tiling dimensions");
                    }
                    build::subgroup(tiles, &last_dims)
                } else {
                    build::tile(tiles)
                }
            }
            (None, false, None) => {
                self.at = start;
                return self.fail(
                    "expected `replicated`, `manual`, `unknown`, `unreduced`, `maximal device=N` or `devices=[...]`",
                );
            }
        };
        Ok(Leaf {
            kind,
            shard_group,
            metadata,
        })
    }

    /// A value of an unknown field: balanced braces, a quoted string or a word.
    fn skip_value(&mut self) -> Parsed<()> {
        match self.peek() {
            Some(b'{') => self.balanced().map(|_| ()),
            Some(b'"') => {
                let rest = &self.rest()[1..];
                match rest.find('"') {
                    Some(end) => {
                        self.at += end + 2;
                        Ok(())
                    }
                    None => self.fail("unclosed string"),
                }
            }
            _ => {
                let rest = self.rest();
                let len = rest
                    .bytes()
                    .take_while(|b| !b.is_ascii_whitespace() && *b != b'}' && *b != b',')
                    .count();
                self.at += len;
                Ok(())
            }
        }
    }

    /// `[dims]d0,d1,...` or `[dims]<=[reshape]T(perm)`.
    fn tile_assignment(&mut self) -> Parsed<TileAssignment> {
        let dims_at = self.at;
        let dims = self.bracketed()?;
        if dims.iter().any(|&d| d <= 0) {
            self.at = dims_at;
            return self.fail("a tiling dimension is not positive");
        }
        let at = self.at;
        let result = if self.eat("<=") {
            let iota = self.iota()?;
            TileAssignment::from_iota(dims, iota)
        } else {
            let devices = self.integers()?;
            TileAssignment::from_list(dims, devices)
        };
        result.map_err(|message| ParseError {
            offset: at,
            message,
        })
    }

    /// `[reshape]` with an optional `T(perm)`.
    fn iota(&mut self) -> Parsed<Iota> {
        let at = self.at;
        let reshape = self.bracketed()?;
        let perm = if self.eat("T(") {
            let perm = self.integers()?;
            self.expect(")")?;
            perm
        } else {
            (0..reshape.len() as i64).collect()
        };
        let perm: Vec<usize> = perm
            .into_iter()
            .map(|p| usize::try_from(p).unwrap_or(usize::MAX))
            .collect();
        Iota::new(reshape, perm).map_err(|message| ParseError {
            offset: at,
            message,
        })
    }

    /// `{manual, replicated}`.
    fn subgroup_types(&mut self) -> Parsed<Vec<Subgroup>> {
        self.expect("{")?;
        let mut out = vec![];
        loop {
            if self.eat("}") {
                return Ok(out);
            }
            self.eat(",");
            let at = self.at;
            out.push(match self.word() {
                "manual" => Subgroup::Manual,
                "replicated" => Subgroup::Replicated,
                "unreduced" => Subgroup::Unreduced,
                other => {
                    self.at = at;
                    return self.fail(format!("unknown subgroup kind `{other}`"));
                }
            });
        }
    }

    /// `mesh[...]...` or `maximal_mesh[device_id=N]` up to the closing `}`.
    fn named(&mut self) -> Parsed<NamedSharding> {
        let mesh = self.mesh()?;
        let mut named = NamedSharding {
            body: if mesh.maximal.is_some() {
                Body::None
            } else {
                Body::Dims(vec![])
            },
            mesh,
            replicated: vec![],
            unreduced: vec![],
            manual: vec![],
            metadata: None,
        };
        let mut seen_dims = false;
        loop {
            if self.eat("}") {
                break;
            }
            self.expect(",")?;
            if self.peek() == Some(b'[') {
                named.body = Body::Dims(self.dim_shardings(&named.mesh)?);
                seen_dims = true;
                continue;
            }
            let at = self.at;
            match self.word() {
                "device_ids" => {
                    self.expect("=")?;
                    named.mesh.device_ids = self.device_ids(named.mesh.len())?;
                }
                word @ ("replicated" | "unreduced" | "manual") => {
                    let kind = match word {
                        "replicated" => Subgroup::Replicated,
                        "unreduced" => Subgroup::Unreduced,
                        _ => Subgroup::Manual,
                    };
                    if self.eat("=") {
                        // `unreduced=max{...}`: the reduction is not modelled.
                        self.word();
                        let axes = self.axis_set(&named.mesh)?;
                        match kind {
                            Subgroup::Replicated => named.replicated = axes,
                            Subgroup::Unreduced => named.unreduced = axes,
                            Subgroup::Manual => named.manual = axes,
                        }
                    } else if !seen_dims {
                        named.body = Body::Whole(kind);
                    }
                }
                "metadata" => {
                    self.expect("=")?;
                    named.metadata = Some(self.balanced()?.to_string());
                }
                other => {
                    self.at = at;
                    return self.fail(format!("unexpected `{other}` in a named sharding"));
                }
            }
        }
        Ok(named)
    }

    fn mesh(&mut self) -> Parsed<Mesh> {
        if self.eat("maximal_mesh[") {
            self.expect("device_id")?;
            self.expect("=")?;
            let d = self.integer()?;
            self.expect("]")?;
            return Ok(Mesh {
                axes: vec![],
                device_ids: DeviceIds::Iota,
                maximal: Some(d),
            });
        }
        self.expect("mesh[")?;
        let mut axes = vec![];
        while !self.eat("]") {
            if !axes.is_empty() {
                self.expect(",")?;
            }
            let name = self.quoted()?;
            self.expect("=")?;
            let at = self.at;
            let size = self.integer()?;
            if size <= 0 {
                self.at = at;
                return self.fail("a mesh axis size must be positive");
            }
            axes.push((name, size));
        }
        let sizes: Vec<i64> = axes.iter().map(|(_, s)| *s).collect();
        super::tile_assignment::product(&sizes).map_err(|message| ParseError {
            offset: self.at,
            message,
        })?;
        Ok(Mesh {
            axes,
            device_ids: DeviceIds::Iota,
            maximal: None,
        })
    }

    /// `'name'`.
    fn quoted(&mut self) -> Parsed<String> {
        self.expect("'")?;
        match self.rest().find('\'') {
            Some(end) => {
                let name = self.rest()[..end].to_string();
                self.at += end + 1;
                Ok(name)
            }
            None => self.fail("unclosed axis name"),
        }
    }

    /// `([4,2]T(1,0))` or `(0,2,1,3)`.
    fn device_ids(&mut self, n: i64) -> Parsed<DeviceIds> {
        self.expect("(")?;
        let at = self.at;
        let ids = if self.peek() == Some(b'[') {
            let iota = self.iota()?;
            if iota.len() != n {
                self.at = at;
                return self.fail(format!(
                    "device_ids lay out {} devices, the mesh has {n}",
                    iota.len()
                ));
            }
            if iota.reshape.len() == 1 {
                DeviceIds::Iota
            } else {
                DeviceIds::Reshaped(iota)
            }
        } else {
            let list = self.integers()?;
            if list.len() as i64 != n {
                self.at = at;
                return self.fail(format!(
                    "device_ids list {} devices, the mesh has {n}",
                    list.len()
                ));
            }
            DeviceIds::List(list)
        };
        self.expect(")")?;
        Ok(ids)
    }

    /// `'b'` or `'b':(2)2`, checked against the mesh.
    fn axis_ref(&mut self, mesh: &Mesh) -> Parsed<AxisRef> {
        let at = self.at;
        let name = self.quoted()?;
        let Some(axis) = mesh.axes.iter().position(|(n, _)| *n == name) else {
            self.at = at;
            return self.fail(format!("the mesh has no axis '{name}'"));
        };
        let sub = if self.eat(":") {
            self.expect("(")?;
            let pre = self.integer()?;
            self.expect(")")?;
            let size = self.integer()?;
            let whole = mesh.axes[axis].1;
            if pre <= 0 || size <= 0 || whole % pre.saturating_mul(size) != 0 {
                self.at = at;
                return self.fail(format!(
                    "sub-axis ({pre}){size} does not divide axis '{name}' of size {whole}"
                ));
            }
            Some((pre, size))
        } else {
            None
        };
        Ok(AxisRef { axis, sub })
    }

    /// `{'a', 'b':(2)2}`.
    fn axis_set(&mut self, mesh: &Mesh) -> Parsed<Vec<AxisRef>> {
        self.expect("{")?;
        let mut out = vec![];
        while !self.eat("}") {
            if !out.is_empty() {
                self.expect(",")?;
            }
            out.push(self.axis_ref(mesh)?);
        }
        Ok(out)
    }

    /// `[{'a'}, {'b', ?}, {}]`.
    fn dim_shardings(&mut self, mesh: &Mesh) -> Parsed<Vec<DimSharding>> {
        self.expect("[")?;
        let mut dims = vec![];
        while !self.eat("]") {
            if !dims.is_empty() {
                self.expect(",")?;
            }
            self.expect("{")?;
            let mut dim = DimSharding {
                axes: vec![],
                closed: true,
            };
            while !self.eat("}") {
                if !dim.axes.is_empty() || !dim.closed {
                    self.expect(",")?;
                }
                if self.eat("?") {
                    dim.closed = false;
                } else {
                    dim.axes.push(self.axis_ref(mesh)?);
                }
            }
            dims.push(dim);
        }
        Ok(dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_where() {
        let e = parse("{devices=[2,2]0,1,2}").unwrap_err();
        assert!(e.message.contains("4 tiles"), "{e}");
        let e = parse("{mesh['a'=2], [{'b'}]}").unwrap_err();
        assert_eq!(e.offset, 16, "{e}");
        for bad in [
            "",
            "{",
            "{devices=[2]<=[3]}",
            "{maximal}",
            "{{}",
            "{devices=[2]0,1 x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replica_groups_of_the_issue() {
        let s = parse("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}").unwrap();
        let leaf = s.v2().unwrap();
        let (tiles, _, _) = leaf.tiling().unwrap();
        assert_eq!(tiles.devices, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(
            s.to_string(),
            "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
        );
    }
}
