//! Errors as one line for people: the error's message followed by those of its causes.

/// `error`'s message followed by its causes' ("error sending request for url (...): connection
/// refused"), each left out when the text so far already says it: a client's terse message
/// gains the detail its sources carry (refused, DNS, TLS, timeout).
///
/// ```
/// let error = std::io::Error::other(std::fmt::Error);
/// assert_eq!(squall::error_text::with_causes(&error), "an error occurred when formatting an argument");
/// ```
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    append_causes(&mut text, error.source());
    text
}

/// Appends the message of `cause` and of each of its own causes to `text`, each left out when
/// `text` already says it.
pub fn append_causes(text: &mut String, mut cause: Option<&dyn std::error::Error>) {
    while let Some(error) = cause {
        let message = error.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        cause = error.source();
    }
}

/// The message a panic carried (the text given to `panic!`), or a placeholder when its payload is
/// not text.
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("tag should be a start tag")).unwrap_err();
/// assert_eq!(squall::error_text::panic_message(caught.as_ref()), "tag should be a start tag");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        return (*text).to_string();
    }
    match payload.downcast_ref::<String>() {
        Some(text) => text.clone(),
        None => "a panic without a message".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("request failed")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn causes_follow_the_message_once() {
        let error = Outer(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "connection refused",
        ));
        assert_eq!(with_causes(&error), "request failed: connection refused");
        let mut text = "connection refused already".to_string();
        append_causes(&mut text, Some(&error.0));
        assert_eq!(text, "connection refused already");
    }
}
