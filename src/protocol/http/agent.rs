//! Who the crawler says it is: the `http.agent.*` keys, read straight from the configuration, and
//! the User-Agent header they make.

use crate::settings::{KeyedSettings, keyed_settings};

keyed_settings! {
    /// Who the crawler says it is (`http.agent.*`): sent in every request's User-Agent; the name is
    /// also the agent robots.txt rules are matched against.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct AgentSettings {
        /// `http.agent.name`: the product name in the User-Agent header. Required (the
        /// configuration refuses an empty one): every crawl must say who it is.
        "http.agent.name" => name: String = String::new(),
        /// `http.agent.version`: appended to the name as `name/version`.
        "http.agent.version" => version: String = env!("CARGO_PKG_VERSION").to_string(),
        /// `http.agent.description`: what the crawler does, first in the parentheses.
        "http.agent.description" => description: String = String::new(),
        /// `http.agent.url`: a page about the crawler, in the parentheses.
        "http.agent.url" => url: String = String::new(),
        /// `http.agent.email`: a contact address, in the parentheses.
        "http.agent.email" => email: String = String::new(),
    }
}

impl AgentSettings {
    /// The User-Agent header: `name/version (description; +url; email)`, leaving out what is empty.
    pub fn user_agent(&self) -> String {
        let mut agent = self.name.clone();
        if !self.version.is_empty() {
            agent.push('/');
            agent.push_str(&self.version);
        }
        let url = (!self.url.is_empty()).then(|| format!("+{}", self.url));
        let extras: Vec<String> = [
            Some(self.description.clone()),
            url,
            Some(self.email.clone()),
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
        if !extras.is_empty() {
            agent.push_str(&format!(" ({})", extras.join("; ")));
        }
        agent
    }
}

impl KeyedSettings for AgentSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.name.trim().is_empty() {
            return Err((
                "http.agent.name",
                "must name your crawler (it is sent to every site): set it in the config file or \
                 with --set http.agent.name=NAME"
                    .to_string(),
            ));
        }
        Ok(())
    }
}
