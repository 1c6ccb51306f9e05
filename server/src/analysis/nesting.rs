//! The guard on composition through called computations.
//!
//! A fusion's maps are composed through the computation it calls, and a fusion
//! inside that computation recurses again. A computation that (directly or through
//! others) calls itself would recurse forever, and a chain of thousands of nested
//! fusions would overflow the thread's stack: both end the process, and a document
//! must never do that. [`enter`] refuses a computation already being composed on
//! this thread and a nesting deeper than [`MAX_DEPTH`]; the caller then marks the
//! indexing unknown with the reason, which the hover and the CLI print. (The cycle
//! itself is reported as the `recursive-call` diagnostic by the model.)

use std::cell::RefCell;

use super::graph::Module;
use super::unknown::Unknown;

/// How deep called computations may nest before the composition gives up. XLA
/// nests fusions a few levels; each level costs a few kilobytes of stack.
pub const MAX_DEPTH: usize = 64;

thread_local! {
    /// The computations being composed on this thread, outermost first, each with
    /// the address of its module (views of different modules may interleave).
    static ACTIVE: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
    /// How many times [`enter`] refused on this thread ([`refusals`]).
    static REFUSALS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many compositions [`enter`] has refused on this thread so far: an answer
/// computed while this number grew depends on what was being composed around it
/// ([`super::memo`] does not keep it).
pub fn refusals() -> u64 {
    REFUSALS.with(std::cell::Cell::get)
}

/// Runs `work` while computation `comp` of `module` is being composed; `Err` with
/// the reason when `comp` is already being composed (a recursive call) or the
/// nesting is too deep.
pub fn enter<T>(module: &Module, comp: usize, work: impl FnOnce() -> T) -> Result<T, Unknown> {
    let key = (std::ptr::from_ref(module) as usize, comp);
    let refusal = ACTIVE.with(|active| {
        let active = active.borrow();
        if let Some(at) = active.iter().position(|k| *k == key) {
            let chain = active[at..]
                .iter()
                .chain(std::iter::once(&key))
                .map(|&(_, c)| name(module, c).to_string())
                .collect();
            Some(Unknown::RecursiveCall { chain })
        } else if active.len() >= MAX_DEPTH {
            Some(Unknown::TooDeep { limit: MAX_DEPTH })
        } else {
            None
        }
    });
    if let Some(reason) = refusal {
        REFUSALS.with(|r| r.set(r.get() + 1));
        return Err(reason);
    }
    ACTIVE.with(|active| active.borrow_mut().push(key));
    let _leave = Leave;
    Ok(work())
}

/// Pops this thread's innermost computation, also when `work` unwinds.
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        ACTIVE.with(|active| {
            active.borrow_mut().pop();
        });
    }
}

fn name(module: &Module, comp: usize) -> String {
    module
        .get(comp)
        .map_or_else(|| format!("#{comp}"), |c| c.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;

    #[test]
    fn a_computation_cannot_enter_itself_and_depth_is_bounded() {
        let (_, modules) = view::parse("HloModule m\nf {\n  ROOT p = f32[2] parameter(0)\n}\n");
        let module = &modules[0];
        let inner = enter(module, 0, || enter(module, 0, || ()));
        let reason = inner.unwrap().unwrap_err();
        let chain = vec!["f".to_string(), "f".to_string()];
        assert_eq!(reason, Unknown::RecursiveCall { chain });
        // The stack is unwound after each call, also after a refusal.
        assert_eq!(enter(module, 0, || 7), Ok(7));

        fn nest(module: &Module, depth: usize) -> Result<usize, Unknown> {
            enter(module, depth, || {
                if depth == 10 * MAX_DEPTH {
                    Ok(depth)
                } else {
                    nest(module, depth + 1)
                }
            })?
        }
        let reason = nest(module, 0).unwrap_err();
        assert_eq!(reason, Unknown::TooDeep { limit: MAX_DEPTH });
        assert_eq!(ACTIVE.with(|a| a.borrow().len()), 0);
    }
}
