//! Long answers written to the output as JSON text, past tower-lsp's `serde_json::Value`.
//!
//! tower-lsp turns every answer into a `serde_json::Value` before it writes it. For a
//! list of objects that is a tree of maps, about 5 KB a document symbol: the outline
//! of a 60 MB dump (25,000 computations) took 130 MB and half a second that way, and
//! the folds of a 600 MB dump 1.7 s. So the [`super::sync::Sequencer`] renames a
//! request listed in [`ROUTES`] to a custom method whose handler serializes its typed
//! answer straight to JSON text ([`Json`]). tower-lsp still runs that handler as it
//! runs any other (the initialization state, cancellation, the panic guard) and hands
//! the text back as a string; [`deliver`] writes it on the [`Output`] as the answer's
//! `result`. Errors and `null` answers pass through tower-lsp unchanged.

use serde::{Serialize, Serializer};
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Request, Response};

use super::output::Output;

/// The custom method that answers `textDocument/documentSymbol` as JSON text.
pub const DOCUMENT_SYMBOL: &str = "hlo-lsp/json/documentSymbol";
/// The custom method that answers `textDocument/foldingRange` as JSON text.
pub const FOLDING_RANGE: &str = "hlo-lsp/json/foldingRange";

/// The requests answered as JSON text, with the method that answers each: those whose
/// answer grows with the document (one entry per computation or instruction).
pub const ROUTES: [(&str, &str); 2] = [
    ("textDocument/documentSymbol", DOCUMENT_SYMBOL),
    ("textDocument/foldingRange", FOLDING_RANGE),
];

/// An answer already serialized: its JSON text, carried through tower-lsp as a string.
#[derive(Debug)]
pub struct Json(String);

impl Json {
    /// Serializes `answer` without building a `Value` of it.
    pub fn of<T: Serialize>(answer: &T) -> Result<Self, Error> {
        serde_json::to_string(answer)
            .map(Json)
            .map_err(|error| Error {
                message: format!("cannot write the answer: {error}").into(),
                ..Error::internal_error()
            })
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// `request` under the name of the method that answers it as JSON text, and whether it
/// was renamed.
pub fn reroute(request: Request) -> (Request, bool) {
    let Some(&(_, route)) = ROUTES
        .iter()
        .find(|(method, _)| *method == request.method())
    else {
        return (request, false);
    };
    let (_, id, params) = request.into_parts();
    let mut renamed = Request::build(route);
    if let Some(id) = id {
        renamed = renamed.id(id);
    }
    if let Some(params) = params {
        renamed = renamed.params(params);
    }
    (renamed.finish(), true)
}

/// Writes the answer of a rerouted request on `output` when it carries JSON text (and
/// returns `None`: tower-lsp has nothing left to write); any other answer (an error,
/// `null`) is returned for tower-lsp to write.
pub fn deliver(answer: Option<Response>, output: &Output) -> Option<Response> {
    let answer = answer?;
    if !matches!(answer.result(), Some(Value::String(_))) {
        return Some(answer);
    }
    let (id, result) = answer.into_parts();
    let Ok(Value::String(json)) = result else {
        unreachable!("the result was just seen to be a string");
    };
    let id = serde_json::to_string(&id).unwrap_or_else(|_| "null".to_string());
    let mut body = Vec::with_capacity(json.len() + id.len() + 40);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","result":"#);
    body.extend_from_slice(json.as_bytes());
    body.extend_from_slice(br#","id":"#);
    body.extend_from_slice(id.as_bytes());
    body.push(b'}');
    output.send_owned(body);
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_listed_requests_are_renamed_and_keep_id_and_params() {
        let params = json!({"textDocument": {"uri": "file:///a.hlo"}});
        let request = Request::build("textDocument/foldingRange")
            .id(7)
            .params(params.clone())
            .finish();
        let (renamed, rerouted) = reroute(request);
        assert!(rerouted);
        assert_eq!(renamed.method(), FOLDING_RANGE);
        assert_eq!(renamed.id(), Some(&7.into()));
        assert_eq!(renamed.params(), Some(&params));
        let hover = Request::build("textDocument/hover").id(8).finish();
        let (same, rerouted) = reroute(hover);
        assert!(!rerouted);
        assert_eq!(same.method(), "textDocument/hover");
    }

    #[tokio::test]
    async fn json_text_is_written_as_the_result_and_other_answers_pass() {
        let (sink, mut read) = tokio::io::duplex(1 << 16);
        let (output, _tower, task) = Output::start(sink);
        let answer = [json!({"startLine": 1, "endLine": 4, "kind": "region"})];
        let text = serde_json::to_value(Json::of(&answer).unwrap()).unwrap();
        let written = deliver(Some(Response::from_ok(3.into(), text)), &output);
        assert!(written.is_none());
        let null = Response::from_ok(4.into(), Value::Null);
        assert_eq!(deliver(Some(null.clone()), &output), Some(null));
        let error = Response::from_error(5.into(), Error::content_modified());
        assert_eq!(deliver(Some(error.clone()), &output), Some(error));
        output.close();
        task.await.unwrap();
        let mut all = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut read, &mut all)
            .await
            .unwrap();
        let (header, body) = all.split_once("\r\n\r\n").unwrap();
        assert_eq!(header, format!("Content-Length: {}", body.len()));
        let message: Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            message,
            json!({"jsonrpc": "2.0", "id": 3, "result": answer})
        );
    }
}
