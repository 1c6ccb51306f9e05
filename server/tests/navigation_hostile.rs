//! Hostile text for the readers behind navigation (issue 18): metadata blocks,
//! stack-frame tables, dump file names and the workspace index never panic on any
//! text, and what they report points at the text they read.

use hlo_lsp::dump::index::symbols;
use hlo_lsp::dump::naming::DumpName;
use hlo_lsp::model::metadata::{scan, string_at, OpMetadata};
use hlo_lsp::model::stack_frames::StackFrameIndex;
use proptest::prelude::*;

/// Text made of the pieces these readers look for, shuffled with noise.
fn pieces() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("metadata={".to_string()),
        Just("source_file=\"".to_string()),
        Just("stack_frame_id=".to_string()),
        Just("source_line=".to_string()),
        Just("}".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\n".to_string()),
        Just(" ".to_string()),
        Just("StackFrames\n".to_string()),
        Just("FileNames\n".to_string()),
        Just("FileLocations\n".to_string()),
        Just("{file_location_id=".to_string()),
        Just(" parent_frame_id=".to_string()),
        Just("{file_name_id=1 function_name_id=1 line=".to_string()),
        Just("%fused (p: f32[4]) -> f32[4] {\n".to_string()),
        Just("ENTRY %main {\n".to_string()),
        Just("  ROOT %f = f32[4] fusion(%p), calls=%fused\n".to_string()),
        Just("HloModule m\n".to_string()),
        "[0-9]{1,3}",
        "[a-z_.%é€]{1,6}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn metadata_ranges_point_at_their_values(text in pieces()) {
        for (block, m) in scan(&text) {
            let inner = &text[block.clone()];
            let braced = inner.starts_with('{') && inner.ends_with('}');
            prop_assert!(braced, "not a block: {:?}", inner);
            let again = OpMetadata::parse(inner);
            prop_assert_eq!(&again, &m);
            if let (Some(file), Some(range)) = (&m.source_file, &m.source_file_range) {
                let (decoded, end) = string_at(inner, range.start).unwrap();
                prop_assert_eq!(&decoded, file);
                prop_assert_eq!(end, range.end);
            }
            if let (Some(id), Some(range)) = (m.stack_frame_id, &m.stack_frame_range) {
                prop_assert_eq!(inner[range.clone()].parse::<u32>().ok(), Some(id));
            }
        }
    }

    #[test]
    fn stacks_end_and_entries_point_into_the_text(text in pieces(), id in 0u32..12) {
        let index = StackFrameIndex::from_tables([(0, text.as_str())]);
        let stack = index.stack(id);
        prop_assert!(stack.len() <= index.stack_frames.len());
        for entry in index.file_names.values() {
            let quoted = text[entry.range.clone()].starts_with('"');
            prop_assert!(quoted, "{:?}", entry);
        }
    }

    #[test]
    fn indexed_names_are_where_they_say(text in pieces()) {
        let lines: Vec<&str> = text.split('\n').collect();
        for s in symbols(&text) {
            let line = lines[s.line as usize];
            let at = s.utf8_column as usize;
            let written = &line[at..at + s.len as usize];
            prop_assert_eq!(written.strip_prefix('%').unwrap_or(written), s.name.as_str());
            prop_assert_eq!(line[..at].encode_utf16().count(), s.utf16_column as usize);
        }
    }

    #[test]
    fn any_file_name_reads_or_not(name in "[a-z0-9_.é-]{0,40}") {
        let path = std::path::PathBuf::from(format!("module_{name}"));
        let _ = DumpName::parse(&path);
        let _ = DumpName::parse(std::path::Path::new(&name));
    }
}
