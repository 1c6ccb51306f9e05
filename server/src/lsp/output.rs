//! The server's output stream, shared by tower-lsp and the diagnostics publisher.
//!
//! tower-lsp serializes every message through `serde_json::Value`; for the
//! diagnostics of a large dump (thousands, a megabyte of JSON) that cost more than
//! the edit that caused them. The publisher writes that notification's JSON itself
//! ([`super::rendered`]), and this module puts it on the same stream as tower-lsp's
//! messages: tower-lsp writes into a [`TowerOutput`], which passes on whole frames
//! only, and one task writes the frames of both to stdout, so that no message is
//! ever cut by another.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

enum Frame {
    Bytes(Vec<u8>),
    /// A header and a body taken as they are (a body of megabytes is not copied).
    Message {
        header: Vec<u8>,
        body: Body,
    },
    /// Write what came before, then stop.
    Close,
}

/// The posting side for whole messages; clone freely.
#[derive(Debug, Clone)]
pub struct Output {
    frames: mpsc::UnboundedSender<Frame>,
}

impl Output {
    /// Starts the writer task on `sink`; returns the posting side, the stream to hand
    /// to tower-lsp, and the task (which ends after [`Output::close`]).
    pub fn start(
        sink: impl AsyncWrite + Unpin + Send + 'static,
    ) -> (Output, TowerOutput, JoinHandle<()>) {
        let (frames, receiver) = mpsc::unbounded_channel();
        let task = tokio::spawn(write_frames(sink, receiver));
        let tower = TowerOutput {
            pending: Vec::new(),
            frames: frames.clone(),
        };
        (Output { frames }, tower, task)
    }

    /// Sends one JSON-RPC message (its body; the header is added here). Dropped once
    /// the output is closed.
    pub fn send(&self, body: &[u8]) {
        self.send_owned(body.to_vec());
    }

    /// Sends one JSON-RPC message whose body the caller hands over: it is written as
    /// it is, after its header (the diagnostics of a 600 MB dump are 5 MB of JSON).
    pub fn send_owned(&self, body: impl Into<Body>) {
        let body = body.into();
        let header = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        let _ = self.frames.send(Frame::Message { header, body });
    }

    /// Stops the writer once everything sent before is written.
    pub fn close(&self) {
        let _ = self.frames.send(Frame::Close);
    }
}

/// A message body handed to the writer. One made from a [`Spare`] goes back to it
/// once written: the next notification of the same size is written into memory
/// already faulted in. (The process gives freed pages back to the system at once, see
/// `main.rs`: a fresh megabyte buffer per publish was 2 ms of page faults per edit of a
/// 60 MB dump, more than rendering its findings.)
#[derive(Debug)]
pub struct Body {
    bytes: Vec<u8>,
    home: Option<Spare>,
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body { bytes, home: None }
    }
}

impl std::ops::Deref for Body {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.bytes
    }
}

impl std::ops::DerefMut for Body {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        if let Some(home) = &self.home {
            home.give_back(std::mem::take(&mut self.bytes));
        }
    }
}

/// One buffer kept between the bodies of a kind of message (a document's diagnostics),
/// the largest given back.
#[derive(Debug, Clone, Default)]
pub struct Spare(Arc<Mutex<Vec<u8>>>);

impl Spare {
    /// An empty body with room for at least `capacity` bytes: the kept buffer when
    /// there is one (a body still being written makes a new one).
    pub fn body(&self, capacity: usize) -> Body {
        let mut bytes = std::mem::take(&mut *self.lock());
        bytes.clear();
        bytes.reserve(capacity);
        Body {
            bytes,
            home: Some(self.clone()),
        }
    }

    fn give_back(&self, bytes: Vec<u8>) {
        let mut kept = self.lock();
        if bytes.capacity() > kept.capacity() {
            *kept = bytes;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

async fn write_frames(
    mut sink: impl AsyncWrite + Unpin,
    mut receiver: mpsc::UnboundedReceiver<Frame>,
) {
    while let Some(frame) = receiver.recv().await {
        let written = match frame {
            Frame::Bytes(bytes) => sink.write_all(&bytes).await,
            Frame::Message { header, body } => match sink.write_all(&header).await {
                Ok(()) => sink.write_all(&body).await,
                error => error,
            },
            Frame::Close => break,
        };
        if written.is_err() {
            return;
        }
        // Flush once the queue is empty, not after every frame of a burst.
        if receiver.is_empty() && sink.flush().await.is_err() {
            return;
        }
    }
    let _ = sink.flush().await;
}

/// The stream tower-lsp writes to: bytes are held until they make a whole frame.
#[derive(Debug)]
pub struct TowerOutput {
    pending: Vec<u8>,
    frames: mpsc::UnboundedSender<Frame>,
}

impl TowerOutput {
    /// Sends every whole frame at the start of `pending`.
    fn pass_on_frames(&mut self) -> std::io::Result<()> {
        while let Some(length) = frame_length(&self.pending) {
            let rest = self.pending.split_off(length);
            let frame = std::mem::replace(&mut self.pending, rest);
            self.frames
                .send(Frame::Bytes(frame))
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        }
        Ok(())
    }
}

/// The length of the frame at the start of `bytes` (headers and body), once all of
/// it is there. A header block without a readable `Content-Length` (tower-lsp
/// always writes one) is passed on as it is rather than held forever.
fn frame_length(bytes: &[u8]) -> Option<usize> {
    const END: &[u8] = b"\r\n\r\n";
    let headers_end = bytes.windows(END.len()).position(|w| w == END)? + END.len();
    let headers = std::str::from_utf8(&bytes[..headers_end]).ok();
    let length = headers.and_then(|h| {
        h.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
    });
    let total = headers_end + length.unwrap_or(0);
    (bytes.len() >= total).then_some(total)
}

impl AsyncWrite for TowerOutput {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.pending.extend_from_slice(buf);
        Poll::Ready(self.pass_on_frames().map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn a_frame_is_whole_only_with_all_of_its_body() {
        let f = frame(r#"{"a":1}"#);
        assert_eq!(frame_length(&f), Some(f.len()));
        assert_eq!(frame_length(&f[..f.len() - 1]), None);
        assert_eq!(frame_length(b"Content-Length: 3\r\n"), None);
        let mut two = f.clone();
        two.extend(frame("{}"));
        assert_eq!(frame_length(&two), Some(f.len()));
        assert_eq!(frame_length(b"X-Other: 1\r\n\r\nrest"), Some(14));
    }

    /// tower-lsp's frames arrive in arbitrary pieces while whole messages are sent
    /// beside them: the output holds every frame intact, in the order each side sent
    /// its own.
    #[tokio::test]
    async fn messages_are_never_cut_by_one_another() {
        let (sink, mut read) = tokio::io::duplex(1 << 20);
        let (output, mut tower, task) = Output::start(sink);
        let tower_frames: Vec<Vec<u8>> = (0..20)
            .map(|k| frame(&format!(r#"{{"tower":{k},"pad":"{}"}}"#, "x".repeat(k * 7))))
            .collect();
        let stream: Vec<u8> = tower_frames.concat();
        let mut at = 0;
        for (k, piece) in [1usize, 5, 17, 3, 64, 2, 200].iter().cycle().enumerate() {
            if at >= stream.len() {
                break;
            }
            let end = (at + piece).min(stream.len());
            tower.write_all(&stream[at..end]).await.unwrap();
            at = end;
            let ours = format!(r#"{{"ours":{k}}}"#);
            if k % 2 == 0 {
                output.send(ours.as_bytes());
            } else {
                output.send_owned(ours.into_bytes());
            }
        }
        output.close();
        task.await.unwrap();
        let mut all = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut read, &mut all)
            .await
            .unwrap();
        let mut bodies = Vec::new();
        let mut rest = &all[..];
        while let Some(length) = frame_length(rest) {
            let text = std::str::from_utf8(&rest[..length]).unwrap();
            bodies.push(text.split("\r\n\r\n").nth(1).unwrap().to_string());
            rest = &rest[length..];
        }
        assert!(rest.is_empty(), "bytes after the last frame: {rest:?}");
        let towers: Vec<serde_json::Value> = bodies
            .iter()
            .map(|b| serde_json::from_str::<serde_json::Value>(b).unwrap())
            .filter(|v| v.get("tower").is_some())
            .collect();
        assert_eq!(towers.len(), 20);
        for (k, v) in towers.iter().enumerate() {
            assert_eq!(v["tower"], k);
        }
        let ours: Vec<u64> = bodies
            .iter()
            .filter_map(|b| serde_json::from_str::<serde_json::Value>(b).ok()?["ours"].as_u64())
            .collect();
        assert_eq!(ours, (0..ours.len() as u64).collect::<Vec<_>>());
        assert!(!ours.is_empty());
    }
}
