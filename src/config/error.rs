//! Why a configuration could not be used.

/// Why a configuration could not be used. Each variant names the offending key or file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not YAML, or not a mapping of keys to values (the message names the line).
    #[error("config is not valid YAML: {0}")]
    Syntax(String),
    /// A key that squall does not know.
    #[error("unknown config key `{key}`{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The closest known key, when one is close.
        suggestion: Option<String>,
    },
    /// A configuration file that is not YAML, or not a mapping of keys to values: the file, the
    /// line, and what is wrong.
    #[error("config file {path}, line {line}: {message}")]
    FileSyntax {
        /// The file.
        path: String,
        /// The line the error is about (1-based).
        line: usize,
        /// What is wrong, in the parser's words.
        message: String,
    },
    /// A known key with a value of the wrong type.
    #[error("config key `{key}` has an invalid value: {message}")]
    InvalidValue {
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A `--set` override that is not `KEY=VALUE`.
    #[error("override {0:?} is not KEY=VALUE")]
    BadOverride(String),
    /// The file holds more than a file of its kind may ([`crate::bounded_file`]).
    #[error(transparent)]
    TooLarge(crate::bounded_file::BoundedFileError),
}

crate::bounded_file::from_bounded_file_error!(ConfigError);
