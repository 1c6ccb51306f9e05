//! The language server: the only module that knows LSP types, JSON-RPC and async.
