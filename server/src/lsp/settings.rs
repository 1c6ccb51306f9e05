//! User settings, from `initializationOptions` and `workspace/didChangeConfiguration`.
//!
//! Both carry the same JSON object (the contract in docs/contracts.md, "Server
//! settings"), bare or, leniently, under an `"hlo-lsp"` / `"hloLsp"` section. Unknown keys
//! are ignored and a malformed value keeps the previous setting, with a warning, so a
//! typo in an editor config never takes features down.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::algebra::DivSpelling;
use crate::device::Device;
use crate::ide::config::{Config, InlayHintMode};

/// `inlayHints.mode` as written in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ModeSetting {
    Off,
    Short,
    Full,
}

impl From<ModeSetting> for InlayHintMode {
    fn from(mode: ModeSetting) -> Self {
        match mode {
            ModeSetting::Off => InlayHintMode::Off,
            ModeSetting::Short => InlayHintMode::Short,
            ModeSetting::Full => InlayHintMode::Full,
        }
    }
}

/// `divSpelling` as written in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum DivSetting {
    /// XLA's spelling: `d0 floordiv 4`.
    FloorDiv,
    /// Python-like: `d0 / 4`.
    Slash,
}

impl From<DivSetting> for DivSpelling {
    fn from(div: DivSetting) -> Self {
        match div {
            DivSetting::FloorDiv => DivSpelling::FloorDiv,
            DivSetting::Slash => DivSpelling::Slash,
        }
    }
}

/// The effective settings of the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// What the features show ([`crate::ide`]).
    pub features: Config,
    /// Publish `uncoalesced-read` as a warning instead of information
    /// (`coalescing.severity`).
    pub uncoalesced_warning: bool,
    /// How long a hover's analysis may run before it answers with what it has,
    /// marked partial (`timeBudget`, seconds); other work gets multiples of it
    /// (see [`Settings::time_budget`]).
    pub time_budget: Duration,
    /// A profile to show beside every dump it measured (`profile`: an XProf
    /// logdir, a run folder, a `.xplane.pb` or a `.trace.json[.gz]`; relative to the
    /// first workspace folder), for one the server does not find near the dump.
    pub profile: Option<std::path::PathBuf>,
    /// The form formatting writes (`format.style`: `"long"`, `"short"`, or
    /// `"auto"`, the form each file is written in: `None`).
    pub format_style: Option<crate::format::Style>,
}

/// What a [`Settings::time_budget`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Hover,
    InlayHints,
    /// The fusion-maps panel: everything about one fusion, asked for once.
    FusionMaps,
    /// The checks of one computation (diagnostics).
    Checks,
    /// Any other request.
    Other,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            features: Config::default(),
            uncoalesced_warning: false,
            time_budget: Duration::from_secs(1),
            profile: None,
            format_style: None,
        }
    }
}

/// The JSON shape of the settings object; every field optional so updates can be partial.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawSettings {
    /// `{"mode": "off" | "short" | "full"}` (docs/contracts.md); a bare mode string is
    /// accepted too.
    inlay_hints: Option<Value>,
    div_spelling: Option<Value>,
    utilization_budget: Option<Value>,
    physical_layout: Option<Value>,
    /// `{"device": "a6000" | {...}, "severity": "information" | "warning"}`.
    coalescing: Option<Value>,
    /// Seconds (a positive number).
    time_budget: Option<Value>,
    /// A path (string); `""` for none (`null`, like a missing field, keeps it).
    profile: Option<Value>,
    /// `{"style": "auto" | "long" | "short"}`.
    format: Option<Value>,
}

impl Settings {
    /// How long `work` may run before it answers with what it has. Editors ask
    /// for hovers and hints again as the user moves, so those stay short; the
    /// fusion-maps panel and a computation's checks (which run once per edit, off
    /// any request) get ten times the hover's.
    pub fn time_budget(&self, work: Work) -> Duration {
        let factor = match work {
            Work::Hover => 1,
            Work::InlayHints => 2,
            Work::Other => 5,
            Work::FusionMaps | Work::Checks => 10,
        };
        self.time_budget.saturating_mul(factor)
    }

    /// Applies a settings object (bare or under a section) on top of `self`.
    /// Returns one warning per value that could not be used.
    pub fn apply(&mut self, value: &Value) -> Vec<String> {
        let section = ["hlo-lsp", "hloLsp", "hlo"]
            .iter()
            .find_map(|key| value.get(key))
            .unwrap_or(value);
        let raw: RawSettings = match serde_json::from_value(section.clone()) {
            Ok(raw) => raw,
            Err(_) => return vec![format!("settings must be a JSON object, got {section}")],
        };
        let mut warnings = Vec::new();
        let mode = raw
            .inlay_hints
            .map(|hints| hints.get("mode").cloned().unwrap_or(hints));
        let features = &mut self.features;
        if let Some(mode) = decode::<ModeSetting>(mode, "inlayHints.mode", &mut warnings) {
            features.inlay_hints = mode.into();
        }
        if let Some(div) = decode::<DivSetting>(raw.div_spelling, "divSpelling", &mut warnings) {
            features.div = div.into();
        }
        set_field(
            &mut features.physical_layout,
            raw.physical_layout,
            "physicalLayout",
            &mut warnings,
        );
        let mut budget = features.utilization_budget;
        set_field(
            &mut budget,
            raw.utilization_budget,
            "utilizationBudget",
            &mut warnings,
        );
        if budget.is_finite() && budget > 0.0 {
            features.utilization_budget = budget;
        } else {
            warnings.push(format!(
                "utilizationBudget must be a positive number, got {budget}"
            ));
        }
        if let Some(seconds) = raw.time_budget.filter(|v| !v.is_null()) {
            match seconds
                .as_f64()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
            {
                Some(time) if !time.is_zero() => self.time_budget = time,
                _ => warnings.push(format!(
                    "ignoring setting timeBudget={seconds}: expected a positive number of seconds"
                )),
            }
        }
        if let Some(c) = raw.coalescing.filter(|c| !c.is_null()) {
            self.apply_coalescing(&c, &mut warnings);
        }
        if let Some(style) = raw.format.as_ref().and_then(|f| f.get("style")) {
            match style.as_str() {
                Some("auto") => self.format_style = None,
                Some("long") => self.format_style = Some(crate::format::Style::Long),
                Some("short") => self.format_style = Some(crate::format::Style::Short),
                _ => warnings.push(format!(
                    "ignoring setting format.style={style}: expected \"auto\", \"long\" or \"short\""
                )),
            }
        }
        match raw.profile {
            None | Some(Value::Null) => {}
            Some(Value::String(path)) => self.profile = profile_path(&path),
            Some(other) => warnings.push(format!(
                "ignoring setting profile={other}: expected a path (a string)"
            )),
        }
        warnings
    }

    /// `coalescing.device` (a preset name or custom numbers) and
    /// `coalescing.severity`.
    fn apply_coalescing(&mut self, c: &Value, warnings: &mut Vec<String>) {
        if !c.is_object() {
            warnings.push(format!("coalescing must be an object, got {c}"));
            return;
        }
        if let Some(device) = c.get("device").filter(|d| !d.is_null()) {
            match device_setting(device) {
                Ok(d) => {
                    self.features.device = d;
                    self.features.device_chosen = true;
                }
                Err(e) => warnings.push(format!("ignoring setting coalescing.device: {e}")),
            }
        }
        match c.get("severity").and_then(Value::as_str) {
            Some("warning") => self.uncoalesced_warning = true,
            Some("information") | Some("info") => self.uncoalesced_warning = false,
            Some(other) => warnings.push(format!(
                "ignoring setting coalescing.severity={other:?}: expected \"information\" or \"warning\""
            )),
            None => {}
        }
    }
}

/// The `profile` setting's path: `~` expanded; empty for none.
fn profile_path(text: &str) -> Option<std::path::PathBuf> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    match (text.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => Some(home.join(rest)),
        _ => Some(std::path::PathBuf::from(text)),
    }
}

/// A device from the `coalescing.device` setting: a preset name, or an object with a `base` preset
/// (default `a6000`) and any of the fields in camelCase overriding it
/// (`{"base": "a100", "dramToL2TransactionBytes": 32}`).
fn device_setting(value: &Value) -> Result<Device, String> {
    match value {
        Value::String(name) => Device::preset(name).ok_or_else(|| {
            format!(
                "unknown device {name:?} (presets: {})",
                crate::device::PRESETS.join(", ")
            )
        }),
        Value::Object(fields) => {
            let base = match fields.get("base") {
                Some(b) => device_setting(b)?,
                None => Device::a6000(),
            };
            let mut merged = serde_json::to_value(&base).map_err(|e| e.to_string())?;
            for (k, v) in fields {
                if k != "base" {
                    merged[k] = v.clone();
                }
            }
            merged["name"] = serde_json::json!("custom");
            let device: Device =
                serde_json::from_value(merged).map_err(|e| format!("device settings: {e}"))?;
            device.validate()?;
            Ok(device)
        }
        other => Err(format!(
            "device must be a preset name or an object, got {other}"
        )),
    }
}

/// Replaces `slot` with `value` decoded as `T`, or records why it could not.
fn set_field<T: serde::de::DeserializeOwned>(
    slot: &mut T,
    value: Option<Value>,
    key: &str,
    warnings: &mut Vec<String>,
) {
    if let Some(decoded) = decode(value, key, warnings) {
        *slot = decoded;
    }
}

/// `value` decoded as `T`; `None` when it is missing or null, or (with a warning)
/// when it is not a `T`.
fn decode<T: serde::de::DeserializeOwned>(
    value: Option<Value>,
    key: &str,
    warnings: &mut Vec<String>,
) -> Option<T> {
    let value = value.filter(|v| !v.is_null())?;
    match serde_json::from_value(value.clone()) {
        Ok(decoded) => Some(decoded),
        Err(error) => {
            warnings.push(format!("ignoring setting {key}={value}: {error}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_bare_and_sectioned_objects_and_partial_updates() {
        let mut settings = Settings::default();
        assert!(settings
            .apply(&json!({"inlayHints": {"mode": "full"}}))
            .is_empty());
        assert_eq!(settings.features.inlay_hints, InlayHintMode::Full);
        let warnings =
            settings.apply(&json!({"hlo-lsp": {"divSpelling": "slash", "physicalLayout": true}}));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.features.div, DivSpelling::Slash);
        assert!(settings.features.physical_layout);
        // Untouched by the second update.
        assert_eq!(settings.features.inlay_hints, InlayHintMode::Full);
    }

    #[test]
    fn the_format_style_is_read_and_a_bad_one_warns() {
        let mut settings = Settings::default();
        assert!(settings
            .apply(&json!({"format": {"style": "long"}}))
            .is_empty());
        assert_eq!(settings.format_style, Some(crate::format::Style::Long));
        assert_eq!(
            settings.apply(&json!({"format": {"style": "wide"}})).len(),
            1
        );
        assert_eq!(settings.format_style, Some(crate::format::Style::Long));
        assert!(settings
            .apply(&json!({"format": {"style": "auto"}}))
            .is_empty());
        assert_eq!(settings.format_style, None);
    }

    #[test]
    fn bad_values_warn_and_keep_the_previous_setting() {
        let mut settings = Settings::default();
        let warnings =
            settings.apply(&json!({"inlayHints": {"mode": "loud"}, "utilizationBudget": -2}));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(settings, Settings::default());
        assert_eq!(settings.apply(&json!(3)).len(), 1);
    }

    #[test]
    fn time_budget_in_seconds_scales_every_budget() {
        let mut settings = Settings::default();
        assert_eq!(settings.time_budget(Work::Hover), Duration::from_secs(1));
        assert!(settings.apply(&json!({"timeBudget": 0.25})).is_empty());
        assert_eq!(
            settings.time_budget(Work::Hover),
            Duration::from_millis(250)
        );
        assert_eq!(
            settings.time_budget(Work::InlayHints),
            Duration::from_millis(500)
        );
        assert_eq!(
            settings.time_budget(Work::Checks),
            Duration::from_millis(2500)
        );
        for bad in [json!(0), json!(-1), json!("1"), json!(1e300)] {
            assert_eq!(
                settings.apply(&json!({"timeBudget": bad})).len(),
                1,
                "{bad}"
            );
        }
        assert_eq!(
            settings.time_budget(Work::Hover),
            Duration::from_millis(250)
        );
        settings.apply(&json!({"timeBudget": 1e9}));
        assert!(settings.time_budget(Work::Checks) >= Duration::from_secs(1_000_000_000));
    }

    #[test]
    fn device_settings_are_presets_or_numbers_over_a_base() {
        let d = device_setting(&json!({"base": "a100", "dramToL2TransactionBytes": 32})).unwrap();
        assert_eq!((d.sm_count, d.dram_to_l2_transaction_bytes), (108, 32));
        assert_eq!(d.name, "custom");
        assert!(device_setting(&json!({"warpSize": 0})).is_err());
        assert!(device_setting(&json!("tpu"))
            .unwrap_err()
            .contains("presets"));
        assert!(device_setting(&json!({"smCount": "many"})).is_err());
        let d = device_setting(&json!({"base": "h100", "clockRateGhz": 1.5})).unwrap();
        assert_eq!((d.clock_rate_ghz, d.fpus_per_core), (1.5, 128));
        assert!(device_setting(&json!({"clockRateGhz": 0.0})).is_err());
        assert!(device_setting(&json!({"memoryBandwidth": -1})).is_err());
        // The host link and the execution units are settings too.
        let d = device_setting(&json!({"base": "h100", "hostBandwidth": 1_000_000_000,
            "matrixUnits": [{"dtype": "bf16", "unitsPerCore": 4, "clockRateGhz": 1.0, "opsPerClock": 512}]}))
        .unwrap();
        assert_eq!(d.host_bandwidth, 1_000_000_000);
        let bf16 = crate::model::PrimitiveType::Bf16;
        assert_eq!(d.peak_matrix_ops_per_ns(&bf16), 132 * 4 * 512 * 2);
        assert!(device_setting(&json!({"hostBandwidth": -1})).is_err());
    }

    #[test]
    fn profile_is_a_path_cleared_by_an_empty_one() {
        let mut settings = Settings::default();
        assert!(settings
            .apply(&json!({"profile": "runs/logdir"}))
            .is_empty());
        assert_eq!(
            settings.profile.as_deref(),
            Some(std::path::Path::new("runs/logdir"))
        );
        assert!(settings.apply(&json!({"inlayHints": "full"})).is_empty());
        assert!(settings.profile.is_some(), "kept by an update without it");
        assert_eq!(settings.apply(&json!({"profile": 3})).len(), 1);
        assert!(settings.profile.is_some());
        assert!(settings.apply(&json!({"profile": null})).is_empty());
        assert!(
            settings.profile.is_some(),
            "null keeps it, as a missing field"
        );
        assert!(settings.apply(&json!({"profile": "  "})).is_empty());
        assert_eq!(settings.profile, None);
    }

    #[test]
    fn coalescing_device_and_severity() {
        let mut settings = Settings::default();
        let warnings =
            settings.apply(&json!({"coalescing": {"device": "h100", "severity": "warning"}}));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.features.device.name, "h100");
        assert!(settings.uncoalesced_warning);
        let warnings = settings.apply(
            &json!({"coalescing": {"device": {"base": "a100", "smCount": 54}, "severity": "loud"}}),
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(settings.features.device.sm_count, 54);
        assert!(
            settings.uncoalesced_warning,
            "a bad severity keeps the previous one"
        );
        assert_eq!(
            settings
                .apply(&json!({"coalescing": {"device": "tpu"}}))
                .len(),
            1
        );
        assert_eq!(settings.features.device.sm_count, 54);
    }
}
