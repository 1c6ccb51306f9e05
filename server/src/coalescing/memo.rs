//! `uncoalesced-read` findings shared between fusions that differ only in names.
//!
//! A dump repeats each layer's fusions dozens of times under other names (and the
//! benchmark module repeats the whole model), and analyzing every one of them was
//! most of what `hlo-lsp check` spent after parsing. What the check shows of a
//! report, besides the names it labels it with, depends only on the text of the
//! fusion and of the computations it calls, with the names and the metadata left
//! out, and on the shapes of the fusion's operands: that text is the key
//! ([`nameless::fusion_key`]). Keys are compared whole, not by a hash, so two fusions share
//! findings exactly when nothing the analysis reads tells them apart.
//!
//! The memo is content-addressed, so an entry never goes stale: the CLI and every
//! version of every document the server holds share it. It is bounded
//! ([`MAX_ENTRIES`]).

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::{Evidence, Family, OperandVerdict, Report};
use crate::model::{self, nameless, ComputationRef, Instruction};

/// What the check shows of one fusion's report, without names.
#[derive(Debug)]
pub struct Shared {
    pub family: Family,
    pub findings: Vec<Finding>,
}

/// One operand read uncoalesced.
#[derive(Debug)]
pub struct Finding {
    /// The operand (and fused parameter) number.
    pub index: usize,
    /// `a warp reads stride 64 (256 B); 1/16 of each transaction used`.
    pub reason: String,
    /// What the first warp (or a tile) reads, for the related location.
    pub evidence: String,
}

impl Shared {
    /// The findings of `report`: operands read uncoalesced with evidence, except
    /// those the analysis could not judge (their reason starts with "its").
    pub fn of(report: &Report, evidence: impl Fn(&OperandVerdict) -> String) -> Shared {
        let findings = report
            .operands
            .iter()
            .filter(|o| !o.coalesced && !matches!(o.evidence, Evidence::None))
            .filter(|o| !o.reason.starts_with("its "))
            .map(|o| Finding {
                index: o.index,
                reason: o.reason.clone(),
                evidence: evidence(o),
            })
            .collect();
        Shared {
            family: report.family.clone(),
            findings,
        }
    }

    /// Whether some finding's text holds one of `names`: then it belongs to the
    /// fusion it was found for (a runtime value labelled with an instruction, an
    /// unknown map naming its op), and another fusion of the same key must be
    /// analyzed on its own. A short name may match by chance; that only costs
    /// the sharing.
    fn mentions<'n>(&self, mut names: impl Iterator<Item = &'n str>) -> bool {
        names.any(|name| {
            self.findings
                .iter()
                .any(|f| f.reason.contains(name) || f.evidence.contains(name))
        })
    }
}

/// Entries kept at most; the memo starts over when it is full. A dump has a few
/// hundred distinct fusions.
pub const MAX_ENTRIES: usize = 4096;

/// `None` for a key whose findings name instructions (see [`Shared::mentions`]).
type Entries = FxHashMap<Box<[u8]>, Option<Arc<Shared>>>;

static MEMO: Mutex<Option<Entries>> = Mutex::new(None);

/// The findings for fusion `fusion` of computation `caller`, which calls `fused`:
/// shared from an earlier fusion of the same key, else `compute`d and kept. `None`
/// when `compute` gives none (it was cut short, or there is nothing to analyze).
pub fn findings(
    m: &model::Module,
    caller: ComputationRef,
    fusion: &Instruction,
    fused: ComputationRef,
    compute: impl FnOnce() -> Option<Shared>,
) -> Option<Arc<Shared>> {
    let Some(key) = nameless::fusion_key(m, caller, fusion) else {
        return compute().map(Arc::new);
    };
    if let Some(kept) = with_memo(|memo| memo.get(&key[..]).cloned()) {
        return match kept {
            Some(shared) => Some(shared),
            None => compute().map(Arc::new),
        };
    }
    let shared = Arc::new(compute()?);
    let names = nameless::own_names(m, fused)
        .into_iter()
        .chain(caller_names(caller, fusion));
    let kept = (!shared.mentions(names)).then(|| shared.clone());
    with_memo(|memo| {
        if memo.len() >= MAX_ENTRIES {
            memo.clear();
        }
        memo.insert(key.into_boxed_slice(), kept);
    });
    Some(shared)
}

/// Whether the memo holds findings to share for `key` ([`nameless::fusion_key`]).
pub fn is_shared(key: &[u8]) -> bool {
    with_memo(|memo| memo.get(key).is_some_and(Option::is_some))
}

fn with_memo<T>(f: impl FnOnce(&mut Entries) -> T) -> T {
    let mut memo = MEMO.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f(memo.get_or_insert_with(Default::default))
}

/// The fusion's name and its operands' names in the caller.
fn caller_names<'c>(
    caller: ComputationRef<'c>,
    fusion: &'c Instruction,
) -> impl Iterator<Item = &'c str> + 'c {
    let operands = fusion
        .operands
        .iter()
        .filter_map(move |o| o.target.map(|t| &*caller.model().instruction(t).name));
    std::iter::once(&*fusion.name).chain(operands)
}
