//! MCP over stdin/stdout: one JSON-RPC message per line, and every line that
//! could be a request is answered.
//!
//! rmcp's own stdio transport skips a line that is not JSON (so that two peers
//! that echo each other's errors cannot storm); but a client that sent a
//! request on such a line then waits for ever. JSON-RPC asks for a reply: this
//! transport answers a line that does not parse (nesting too deep, a lone
//! surrogate, a number out of range, plain garbage) with `-32700 Parse error`,
//! and JSON that is not a JSON-RPC message with `-32600 Invalid Request`, with
//! the request's `id` when it can be read and `null` otherwise, then goes on
//! reading. A line that is not a request (no `id`: a notification, or an
//! unparsable line with no readable `id`) still gets its error reply, which a
//! client that sent no request ignores; two ochre servers are never wired to
//! each other's stdio, so there is no peer to storm.

use std::future::Future;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The longest line read as a message; a longer one is answered with an error
/// and skipped without being held in memory.
pub const MAX_LINE: usize = 64 << 20;

/// A line to write, and who waits until it is written.
type Out = (Vec<u8>, Option<oneshot::Sender<()>>);

/// The transport: messages read by a reader task, lines written by a writer task.
pub struct LineTransport {
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: mpsc::UnboundedSender<Out>,
}

/// The transport on the process's stdin and stdout.
pub fn stdio() -> LineTransport {
    lines(tokio::io::stdin(), tokio::io::stdout())
}

/// The transport on any reader and writer.
pub fn lines<R, W>(reader: R, writer: W) -> LineTransport
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, mut queue) = mpsc::unbounded_channel::<Out>();
    tokio::spawn(async move {
        let mut w = writer;
        while let Some((mut line, done)) = queue.recv().await {
            if !line.is_empty() {
                line.push(b'\n');
                if let Err(e) = async {
                    w.write_all(&line).await?;
                    w.flush().await
                }
                .await
                {
                    tracing::warn!(error = %e, "cannot write to stdout; the client is gone");
                    break;
                }
            }
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
    });
    let (tx, rx) = mpsc::channel(64);
    let replies = out.clone();
    tokio::spawn(async move {
        let mut r = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf).await;
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read stdin");
                    break;
                }
            }
            if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
                let id = id_in_raw(&buf);
                if !skip_line(&mut r).await {
                    break;
                }
                let _ = replies.send((
                    error(
                        id,
                        -32600,
                        &format!("Invalid Request: the message is longer than {MAX_LINE} bytes"),
                    ),
                    None,
                ));
                continue;
            }
            match decode(&buf) {
                Decoded::Message(m) => {
                    if tx.send(*m).await.is_err() {
                        break;
                    }
                }
                Decoded::Skip => {}
                Decoded::Reply(v) => {
                    let _ = replies.send((v, None));
                }
            }
        }
        // Replies to the last lines are written before the session ends.
        let (done, written) = oneshot::channel();
        if replies.send((Vec::new(), Some(done))).is_ok() {
            let _ = written.await;
        }
    });
    LineTransport { rx, out }
}

/// Read and drop the rest of a line; false at the end of the input.
async fn skip_line<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> bool {
    loop {
        let (used, found) = match r.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(b) => match b.iter().position(|c| *c == b'\n') {
                Some(i) => (i + 1, true),
                None => (b.len(), false),
            },
        };
        r.consume(used);
        if found {
            return true;
        }
    }
}

enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Skip,
    Reply(Vec<u8>),
}

/// One line: a message, nothing (blank), or the error reply to send.
fn decode(line: &[u8]) -> Decoded {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    // One parse for a well-formed message; the slow path below only classifies
    // what failed.
    let e = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(m) => return Decoded::Message(Box::new(m)),
        Err(e) => e,
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!(error = %e, "a line that is not JSON");
            return Decoded::Reply(error(id_in_raw(line), -32700, &format!("Parse error: {e}")));
        }
    };
    if value.get("id").is_none() && value.get("method").is_some_and(Value::is_string) {
        // A notification (of a kind nobody knows, or with bad params)
        // gets no reply.
        return Decoded::Skip;
    }
    let id = value.get("id").filter(|id| is_id(id)).cloned();
    // A request for a method MCP defines, with params of the wrong
    // shape, is `Invalid params`; anything else is not a request.
    let method = value.get("method").and_then(Value::as_str);
    if let (Some(_), Some(shape)) = (&id, method.and_then(params_shape)) {
        return Decoded::Reply(error(
            id.unwrap_or(Value::Null),
            -32602,
            &format!("{}: params must be {shape}", method.unwrap_or_default()),
        ));
    }
    Decoded::Reply(error(id.unwrap_or(Value::Null), -32600, &format!("Invalid Request: {e}")))
}

/// Whether a value can be a JSON-RPC request id.
fn is_id(v: &Value) -> bool {
    v.is_string() || v.is_i64() || v.is_u64()
}

/// A JSON-RPC error reply, as a line.
fn error(id: Value, code: i64, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .unwrap_or_default()
}

/// The `id` member of the top-level object of a line that does not parse as a
/// whole, read up to where it breaks; `null` when there is none to read.
fn id_in_raw(line: &[u8]) -> Value {
    let b = line;
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let Some(end) = string_end(b, i) else {
                    return Value::Null;
                };
                if depth == 1 && &b[i..end] == b"\"id\"" {
                    let mut j = end;
                    while j < b.len() && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if b.get(j) == Some(&b':') {
                        j += 1;
                        while j < b.len() && b[j].is_ascii_whitespace() {
                            j += 1;
                        }
                        let token_end = match b.get(j) {
                            Some(b'"') => string_end(b, j),
                            Some(c) if c.is_ascii_digit() || *c == b'-' => Some(
                                j + b[j..]
                                    .iter()
                                    .take_while(|c| c.is_ascii_digit() || **c == b'-')
                                    .count(),
                            ),
                            _ => None,
                        };
                        return token_end
                            .and_then(|e| serde_json::from_slice::<Value>(&b[j..e]).ok())
                            .filter(is_id)
                            .unwrap_or(Value::Null);
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

impl Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            let (done, written) = oneshot::channel();
            out.send((line, Some(done))).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            })?;
            written.await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            })
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rx.close();
        Ok(())
    }
}

/// The params an MCP request method takes, for `-32602` messages (`None`: not
/// a method a client sends to a server).
pub(crate) fn params_shape(method: &str) -> Option<&'static str> {
    Some(match method {
        "tools/call" => "{name: string, arguments?: object}",
        "tools/list" | "resources/list" | "prompts/list" | "resources/templates/list" => {
            "{cursor?: string}"
        }
        "initialize" => {
            "{protocolVersion: string, capabilities: object, clientInfo: {name, version}}"
        }
        "ping" => "{} or none",
        "logging/setLevel" => "{level: string}",
        "completion/complete"
        | "prompts/get"
        | "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe" => "the object MCP defines for it",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match decode(line.as_bytes()) {
            Decoded::Reply(v) => serde_json::from_slice(&v).expect("a JSON reply"),
            Decoded::Message(_) => panic!("{line:?} was taken as a message"),
            Decoded::Skip => panic!("{line:?} was skipped"),
        }
    }

    #[test]
    fn lines_that_do_not_parse_get_a_parse_error_with_the_id_when_it_can_be_read() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let r = reply(&deep);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (Value::Null, json!(-32700)));
        let r = reply(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"s":"\ud800"}}}"#,
        );
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(7), json!(-32700)));
        let r = reply(r#"{"jsonrpc":"2.0","method":"ping","params":{"n":1e400},"id":"a\"b"}"#);
        assert_eq!(r["id"], json!("a\"b"));
        // An "id" inside the params is not the request's.
        let r = reply(r#"{"jsonrpc":"2.0","method":"x","params":{"id":3,"v":1e400}}"#);
        assert_eq!(r["id"], Value::Null);
        assert_eq!(reply("not json")["error"]["code"], -32700);
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        let r = reply(r#"{"jsonrpc":"2.0","id":5}"#);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(5), json!(-32600)));
        assert_eq!(reply("[1,2]")["error"]["code"], -32600);
        assert!(matches!(decode(b"  \r\n"), Decoded::Skip));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#),
            Decoded::Message(_)
        ));
    }
}
