//! The colour of a measured node: its share of the step in five bands, pale to dark
//! (ColorBrewer's sequential OrRd scale, which reads as "hotter" and stays legible
//! to the colour-blind). Bands of the step rather than of the graph's hottest node:
//! the same colour means the same share wherever the graph is drawn, so a pale graph
//! says the time is elsewhere. A node the profile has no event of stays white.

use serde_json::{json, Value};

/// One band of the scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    /// The least share of the step in the band, in percent.
    pub from_percent: f64,
    /// The box's fill.
    pub fill: &'static str,
    /// Its text's colour (white on the dark bands).
    pub text: &'static str,
    pub meaning: &'static str,
}

/// The bands, coolest first.
pub const BANDS: [Band; 5] = [
    Band {
        from_percent: 0.0,
        fill: "#fef0d9",
        text: "#000000",
        meaning: "under 1% of the step",
    },
    Band {
        from_percent: 1.0,
        fill: "#fdcc8a",
        text: "#000000",
        meaning: "1-5% of the step",
    },
    Band {
        from_percent: 5.0,
        fill: "#fc8d59",
        text: "#000000",
        meaning: "5-15% of the step",
    },
    Band {
        from_percent: 15.0,
        fill: "#e34a33",
        text: "#ffffff",
        meaning: "15-40% of the step",
    },
    Band {
        from_percent: 40.0,
        fill: "#b30000",
        text: "#ffffff",
        meaning: "40% of the step and more",
    },
];

/// The band of a share of the step.
pub fn band(percent: f64) -> &'static Band {
    BANDS
        .iter()
        .rev()
        .find(|b| percent >= b.from_percent)
        .unwrap_or(&BANDS[0])
}

/// The bands as JSON, for a legend: `[{from_percent, colour, meaning}]`.
pub fn legend() -> Value {
    BANDS
        .iter()
        .map(|b| json!({ "from_percent": b.from_percent, "colour": b.fill, "meaning": b.meaning }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_fall_in_their_band() {
        assert_eq!(band(0.0).fill, "#fef0d9");
        assert_eq!(band(0.99).fill, "#fef0d9");
        assert_eq!(band(1.0).fill, "#fdcc8a");
        assert_eq!(band(12.0).fill, "#fc8d59");
        assert_eq!(band(39.9).fill, "#e34a33");
        assert_eq!(band(100.0).fill, "#b30000");
        assert_eq!(band(f64::NAN).fill, "#fef0d9");
    }
}
