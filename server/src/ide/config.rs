//! What the user chose, as the features need it: how maps print, how much a hover
//! shows, which GPU the coalescing analysis models. Plain values: the server reads
//! them from the editor's settings (`lsp::settings`), the CLI from its flags.

use crate::algebra::{DivSpelling, PrintOptions};
use crate::coalescing::Device;

/// How much of a map an inlay hint shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InlayHintMode {
    /// No hints.
    Off,
    /// The map truncated to [`Config::SHORT_HINT_CHARS`], full text in the tooltip.
    #[default]
    Short,
    /// The whole map inline.
    Full,
}

/// The options of every feature of [`crate::ide`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub inlay_hints: InlayHintMode,
    /// How floor division prints (`d0 floordiv 4` or `d0 / 4`).
    pub div: DivSpelling,
    /// Times a loop fusion may compute each element of an expensive instruction before
    /// hover warns that it recomputes it (1.0: computed once).
    pub utilization_budget: f64,
    /// Show maps over the physical (layout-ordered) dimensions instead of logical ones.
    pub physical_layout: bool,
    /// The GPU the coalescing analysis models.
    pub device: Device,
    /// Whether the user chose [`Self::device`]: a CPU dump is then read as if compiled
    /// for it; otherwise GPU analyses leave CPU dumps alone.
    pub device_chosen: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            inlay_hints: InlayHintMode::Short,
            div: DivSpelling::FloorDiv,
            utilization_budget: 1.0,
            physical_layout: false,
            device: Device::a6000(),
            device_chosen: false,
        }
    }
}

impl Config {
    /// Inlay hints longer than this are truncated in `short` mode.
    pub const SHORT_HINT_CHARS: usize = 40;

    /// How maps are printed under these options.
    pub fn print_options(&self, multiline: bool) -> PrintOptions {
        PrintOptions {
            div: self.div,
            multiline,
        }
    }
}
