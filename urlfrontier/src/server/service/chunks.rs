//! A client stream answered chunk by chunk (PutURLs, PutDiscovered): the messages waiting are
//! taken together, their answers go out in order, and a broken stream ends the call with what was
//! wrong once the messages before it are answered.

use std::future::Future;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tracing::debug;

use super::Answers;

/// Answers `inbound`, a stream of `call`, taking up to `chunk` waiting messages at once and
/// sending what `answer` makes of them.
pub(super) fn answer_in_chunks<I, A, F, Fut>(
    call: &'static str,
    inbound: Streaming<I>,
    chunk: usize,
    mut answer: F,
) -> Answers<A>
where
    I: Send + 'static,
    A: Send + 'static,
    F: FnMut(Vec<I>) -> Fut + Send + 'static,
    Fut: Future<Output = Vec<A>> + Send,
{
    let (sender, answers) = mpsc::channel(chunk * 2);
    tokio::spawn(async move {
        let mut chunks = inbound.ready_chunks(chunk);
        while let Some(messages) = chunks.next().await {
            let (messages, broken) = until_error(messages);
            for reply in answer(messages).await {
                if sender.send(Ok(reply)).await.is_err() {
                    return; // the client is gone; its writes are done, only answers are lost
                }
            }
            if let Some(status) = broken {
                // The stream cannot go on (a message over the size limit, a reset, a client
                // gone): the call ends with what was wrong; the messages before it were answered.
                debug!(%status, call, "stream ended by an error");
                let ended = tonic::Status::new(
                    status.code(),
                    format!("{call} ended: {}", status.message()),
                );
                let _ = sender.send(Err(ended)).await;
                return;
            }
        }
    });
    Box::pin(ReceiverStream::new(answers))
}

/// The messages of `chunk` before its first error, and that error.
fn until_error<T>(chunk: Vec<Result<T, tonic::Status>>) -> (Vec<T>, Option<tonic::Status>) {
    let mut messages = Vec::with_capacity(chunk.len());
    for message in chunk {
        match message {
            Ok(message) => messages.push(message),
            Err(status) => return (messages, Some(status)),
        }
    }
    (messages, None)
}
