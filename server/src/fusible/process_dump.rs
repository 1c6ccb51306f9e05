//! XLA's own record of priority fusion (`FusionProcessDumpProto`,
//! `xla/service/gpu/fusion_process_dump.proto`), which XLA writes beside its dumps as
//! text (`*.priority_fusion_dump.txt` with
//! `--xla_dump_hlo_pass_re=priority-fusion --xla_dump_fusion_visualization`): every
//! `update_priority` with the times XLA's cost model gave, every `producer_ineligible`
//! with XLA's reason, every `fusion` made. When it is there, its words and times are
//! XLA's and win over the rules and model ported here.

use crate::device::text_proto::{self, Message, Value};

/// One step of the dump.
#[derive(Clone, Debug, PartialEq)]
pub enum DumpStep {
    Fusion {
        fusion: String,
        producer: String,
        consumer: String,
    },
    UpdatePriority {
        producer: String,
        consumers: Vec<String>,
        us_fused: f64,
        us_unfused: f64,
    },
    ProducerIneligible {
        producer: String,
        reason: String,
    },
}

/// The steps of a dump, in order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ProcessDump {
    pub steps: Vec<DumpStep>,
}

fn scalar(m: &Message, name: &str) -> String {
    match m.get(name).map(|f| &f.value) {
        Some(Value::Scalar { text, .. }) => text.clone(),
        _ => String::new(),
    }
}

fn scalars(m: &Message, name: &str) -> Vec<String> {
    m.fields
        .iter()
        .filter(|f| f.name == name)
        .filter_map(|f| match &f.value {
            Value::Scalar { text, .. } => Some(text.clone()),
            Value::Message(_) => None,
        })
        .collect()
}

fn step(m: &Message) -> Option<DumpStep> {
    let field = m.fields.first()?;
    let Value::Message(s) = &field.value else {
        return None;
    };
    let number = |name: &str| scalar(s, name).parse::<f64>().unwrap_or(0.0);
    Some(match field.name.as_str() {
        "fusion" => DumpStep::Fusion {
            fusion: scalar(s, "fusion_name"),
            producer: scalar(s, "producer_name"),
            consumer: scalar(s, "consumer_name"),
        },
        "update_priority" => DumpStep::UpdatePriority {
            producer: scalar(s, "producer_name"),
            consumers: scalars(s, "consumer_names"),
            us_fused: number("us_fused"),
            us_unfused: number("us_unfused"),
        },
        "producer_ineligible" => DumpStep::ProducerIneligible {
            producer: scalar(s, "producer_name"),
            reason: scalar(s, "reason"),
        },
        _ => return None,
    })
}

/// What XLA's dump says about one producer: its last priority update or refusal, and
/// whether it was fused.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub fused: bool,
    /// XLA's reason when the producer was ineligible.
    pub reason: Option<String>,
    pub us_unfused: Option<f64>,
    pub us_fused: Option<f64>,
}

impl ProcessDump {
    /// Reads the text format of a `FusionProcessDumpProto`; `Err` with the position.
    pub fn parse(text: &str) -> Result<ProcessDump, text_proto::TextProtoError> {
        let message = text_proto::parse(text)?;
        let steps = message
            .fields
            .iter()
            .filter(|f| f.name == "fusion_steps")
            .filter_map(|f| match &f.value {
                Value::Message(m) => step(m),
                Value::Scalar { .. } => None,
            })
            .collect();
        Ok(ProcessDump { steps })
    }

    /// XLA's verdict on `producer`, `None` when the dump never names it.
    pub fn verdict(&self, producer: &str) -> Option<Verdict> {
        let mut v: Option<Verdict> = None;
        for s in &self.steps {
            let entry = || Verdict {
                fused: false,
                reason: None,
                us_unfused: None,
                us_fused: None,
            };
            match s {
                DumpStep::Fusion { producer: p, .. } if p == producer => {
                    v.get_or_insert_with(entry).fused = true;
                }
                DumpStep::UpdatePriority {
                    producer: p,
                    us_fused,
                    us_unfused,
                    ..
                } if p == producer => {
                    let e = v.get_or_insert_with(entry);
                    e.us_fused = Some(*us_fused);
                    e.us_unfused = Some(*us_unfused);
                    e.reason = None;
                }
                DumpStep::ProducerIneligible {
                    producer: p,
                    reason,
                } if p == producer => {
                    v.get_or_insert_with(entry).reason = Some(reason.clone());
                }
                _ => {}
            }
        }
        v
    }
}

/// The priority-fusion dump XLA wrote in the folder of `file`
/// (`*priority_fusion_dump*.txt` or `*fusion_process_dump*`), preferring one whose
/// name starts like `file`'s (`module_0001.jit_f.`), then the first by name.
pub fn beside(file: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let stem = file.file_name()?.to_str()?;
    let prefix: String = stem.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.contains("priority_fusion_dump") || n.contains("fusion_process_dump")
            })
        })
        .collect();
    found.sort_by_key(|p| {
        let same = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&prefix));
        (!same, p.clone())
    });
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "fusion_steps {\n  update_priority {\n    producer_name: \"a\"\n    consumer_names: \"b\"\n    consumer_names: \"c\"\n    us_fused: 1.5\n    us_unfused: 4\n  }\n}\nfusion_steps {\n  producer_ineligible {\n    producer_name: \"r\"\n    reason: \"both the producer and the consumer contain a reduce\"\n  }\n}\nfusion_steps {\n  fusion {\n    fusion_name: \"fusion\"\n    producer_name: \"a\"\n    consumer_name: \"b\"\n  }\n}\n";

    #[test]
    fn verdicts_are_xlas_words_and_times() {
        let d = ProcessDump::parse(SAMPLE).unwrap();
        assert_eq!(d.steps.len(), 3);
        let a = d.verdict("a").unwrap();
        assert!(a.fused && a.reason.is_none());
        assert_eq!((a.us_unfused, a.us_fused), (Some(4.0), Some(1.5)));
        let r = d.verdict("r").unwrap();
        assert!(!r.fused);
        assert_eq!(
            r.reason.as_deref(),
            Some("both the producer and the consumer contain a reduce")
        );
        assert_eq!(d.verdict("zzz"), None);
        assert!(ProcessDump::parse("fusion_steps {").is_err());
    }
}
