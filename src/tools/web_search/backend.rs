//! The search services `web_search` can ask, and how each answers.

use serde_json::Value;

/// One result: what the model reads and the source it cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// A configured search service.
#[derive(Clone, PartialEq, Eq)]
pub enum Backend {
    /// A SearXNG instance (`{url}/search?format=json`); its JSON output
    /// must be enabled in the instance's settings.
    Searxng { url: String },
    /// Brave Search's API, with its subscription token.
    Brave { url: String, key: String },
    /// Tavily's search API, with its key.
    Tavily { url: String, key: String },
}

/// The key is left out: the settings can end up in a log.
impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.describe())
    }
}

impl Backend {
    /// The service of `[search]`; the key is read from `api_key_env` (or
    /// the service's usual variable). `Err` says what to fix.
    pub fn from_config(
        c: &crate::config::SearchConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Backend, String> {
        let key = |default_var: &str| {
            if c.key_withheld {
                return Err(format!(
                    "[search] sends to {} because this project's .cairn/config.toml says so, \
                     not your own config; cairn sends no key of yours to an address a \
                     repository names. Set that `url` in your own config to use it.",
                    c.url.as_deref().unwrap_or("another address")
                ));
            }
            let var = c.api_key_env.as_deref().unwrap_or(default_var);
            env(var).filter(|k| !k.is_empty()).ok_or_else(|| {
                format!(
                    "[search] provider = \"{}\" needs a key in ${var}",
                    c.provider
                )
            })
        };
        let url = |default: &str| {
            c.url
                .clone()
                .unwrap_or_else(|| default.to_string())
                .trim_end_matches('/')
                .to_string()
        };
        Ok(match c.provider.as_str() {
            "searxng" => Backend::Searxng {
                url: c.url.clone().map(|u| u.trim_end_matches('/').to_string()).ok_or(
                    "[search] provider = \"searxng\" needs `url` (your instance, e.g. http://127.0.0.1:8888)",
                )?,
            },
            "brave" => Backend::Brave {
                url: url("https://api.search.brave.com/res/v1/web/search"),
                key: key("BRAVE_API_KEY")?,
            },
            "tavily" => Backend::Tavily {
                url: url("https://api.tavily.com/search"),
                key: key("TAVILY_API_KEY")?,
            },
            other => {
                return Err(format!(
                    "[search] provider = \"{other}\" is not known; use searxng, brave or tavily"
                ));
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Searxng { .. } => "searxng",
            Backend::Brave { .. } => "brave",
            Backend::Tavily { .. } => "tavily",
        }
    }

    /// "searxng at http://…", for the permission dialog.
    pub fn describe(&self) -> String {
        let url = match self {
            Backend::Searxng { url } | Backend::Brave { url, .. } | Backend::Tavily { url, .. } => {
                url
            }
        };
        format!("{} at {url}", self.name())
    }

    pub async fn search(
        &self,
        client: &reqwest::Client,
        query: &str,
        count: usize,
    ) -> Result<Vec<SearchResult>, String> {
        let request = match self {
            Backend::Searxng { url } => client
                .get(format!("{url}/search"))
                .query(&[("q", query), ("format", "json")]),
            Backend::Brave { url, key } => client
                .get(url)
                .header("X-Subscription-Token", key)
                .header("Accept", "application/json")
                .query(&[("q", query), ("count", &count.to_string())]),
            Backend::Tavily { url, key } => client
                .post(url)
                .bearer_auth(key)
                .json(&serde_json::json!({"query": query, "max_results": count})),
        };
        let response = request
            .send()
            .await
            .map_err(|e| format!("{} could not be reached ({})", self.name(), e.without_url()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{} answered HTTP {status}", self.name()));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|e| format!("{} sent an answer that is not JSON ({e})", self.name()))?;
        Ok(self.results(&body))
    }

    /// The results in a service's JSON answer.
    fn results(&self, body: &Value) -> Vec<SearchResult> {
        let (list, snippet) = match self {
            Backend::Searxng { .. } | Backend::Tavily { .. } => (&body["results"], "content"),
            Backend::Brave { .. } => (&body["web"]["results"], "description"),
        };
        let field = |r: &Value, k: &str| r[k].as_str().unwrap_or_default().to_string();
        (list.as_array().into_iter().flatten())
            .filter(|r| r["url"].is_string())
            .map(|r| SearchResult {
                title: field(r, "title"),
                url: field(r, "url"),
                snippet: plain(&field(r, snippet)),
            })
            .collect()
    }
}

/// A snippet without the markup services put in it (`<b>` around the
/// words searched for, `&amp;`).
fn plain(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SearchConfig;
    use serde_json::json;

    fn config(provider: &str, url: Option<&str>) -> SearchConfig {
        SearchConfig {
            provider: provider.into(),
            url: url.map(String::from),
            api_key_env: None,
            max_uses: None,
            key_withheld: false,
        }
    }

    #[test]
    fn each_service_needs_what_it_needs() {
        let none = |_: &str| None;
        assert!(
            Backend::from_config(&config("searxng", None), none)
                .unwrap_err()
                .contains("needs `url`")
        );
        assert!(
            Backend::from_config(&config("brave", None), none)
                .unwrap_err()
                .contains("$BRAVE_API_KEY")
        );
        assert!(
            Backend::from_config(&config("bing", None), none)
                .unwrap_err()
                .contains("not known")
        );
        let b = Backend::from_config(&config("tavily", None), |v| {
            (v == "TAVILY_API_KEY").then(|| "k".into())
        })
        .unwrap();
        assert_eq!(b.describe(), "tavily at https://api.tavily.com/search");
        assert!(!format!("{b:?}").contains('k') || !format!("{b:?}").contains("\"k\""));
    }

    #[test]
    fn results_are_read_from_each_answer_shape() {
        let searx = Backend::Searxng { url: "u".into() };
        let r = searx.results(&json!({"results": [{"url": "https://a", "title": "A", "content": "x <b>y</b>"}, {"title": "no url"}]}));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].snippet, "x y");
        let brave = Backend::Brave {
            url: "u".into(),
            key: "k".into(),
        };
        let r = brave.results(
            &json!({"web": {"results": [{"url": "https://b", "title": "B", "description": "d"}]}}),
        );
        assert_eq!(
            (r[0].url.as_str(), r[0].snippet.as_str()),
            ("https://b", "d")
        );
    }
}
