//! Whether the engine runs squall's Painless scripts, and so how a document is read and changed in
//! one step: by a script the engine runs, or by a conditional write squall retries.
//!
//! OpenSearch and a full Elasticsearch distribution serve Painless. An Elasticsearch node built
//! without its modules (or a cluster with `script.allowed_types: none`) does not: there, squall's
//! queue frontier changes its documents with `if_seq_no` / `if_primary_term` writes instead.

use serde::{Deserialize, Serialize};

use super::{EsClient, EsError, Method};

/// How updates that read and change a document in one step are made (`es.queues.updates`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateMode {
    /// Painless scripts when the engine serves them, conditional writes otherwise (asked once).
    #[default]
    Auto,
    /// Painless scripts, run by the engine (an `update` with a `script`).
    Scripted,
    /// Read, change in squall, write back only if nobody changed the document meanwhile
    /// (`if_seq_no` / `if_primary_term`), and start again on a conflict.
    Conditional,
}

/// How updates are made with this engine, once [`UpdateMode::Auto`] is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Updates {
    /// Painless scripts.
    Scripted,
    /// Conditional writes.
    Conditional,
}

impl EsClient {
    /// How updates are made: the connection's [`UpdateMode`], or for `Auto`, scripts when the
    /// engine lists Painless among its script languages (asked once, then remembered).
    pub async fn updates(&self) -> Result<Updates, EsError> {
        match self.settings.update_mode {
            UpdateMode::Scripted => return Ok(Updates::Scripted),
            UpdateMode::Conditional => return Ok(Updates::Conditional),
            UpdateMode::Auto => {}
        }
        self.updates
            .get_or_try_init(|| async {
                let painless = self.serves_painless().await?;
                tracing::info!(
                    painless,
                    "queue updates: {}",
                    if painless {
                        "Painless scripts"
                    } else {
                        "conditional writes (the engine runs no Painless)"
                    }
                );
                Ok(if painless {
                    Updates::Scripted
                } else {
                    Updates::Conditional
                })
            })
            .await
            .copied()
    }

    /// Whether `GET /_script_language` lists Painless with inline scripts allowed. An engine that
    /// refuses the request itself (4xx) runs no scripts squall can use.
    async fn serves_painless(&self) -> Result<bool, EsError> {
        let answer = match self
            .request(Method::Get, "/_script_language", &[], None)
            .await
        {
            Ok(answer) => answer,
            Err(error) if error.status().is_some_and(|s| (400..500).contains(&s)) => {
                return Ok(false);
            }
            Err(error) => return Err(error),
        };
        Ok(lists_inline_painless(&answer))
    }
}

/// Whether a `_script_language` answer lists Painless and allows inline scripts.
fn lists_inline_painless(answer: &serde_json::Value) -> bool {
    let inline = answer["types_allowed"]
        .as_array()
        .is_none_or(|types| types.iter().any(|t| t == "inline"));
    let painless = answer["language_contexts"]
        .as_array()
        .is_some_and(|langs| langs.iter().any(|l| l["language"] == "painless"));
    inline && painless
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn painless_must_be_listed_and_inline_scripts_allowed() {
        let listed = json!({ "types_allowed": ["inline", "stored"],
            "language_contexts": [{ "language": "expression" }, { "language": "painless" }] });
        assert!(lists_inline_painless(&listed));
        let none = json!({ "types_allowed": ["inline", "stored"], "language_contexts": [] });
        assert!(!lists_inline_painless(&none));
        let stored_only = json!({ "types_allowed": ["stored"],
            "language_contexts": [{ "language": "painless" }] });
        assert!(!lists_inline_painless(&stored_only));
    }

    #[test]
    fn the_mode_reads_as_written_in_a_config_file() {
        let mode: UpdateMode = serde_json::from_value(json!("conditional")).expect("mode");
        assert_eq!(mode, UpdateMode::Conditional);
        assert!(serde_json::from_value::<UpdateMode>(json!("sometimes")).is_err());
    }
}
