//! Fuzzy matching for the palette and the file picker.

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// One match: the item's index, its score and the matched char positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub index: usize,
    pub score: u32,
    pub positions: Vec<u32>,
}

#[derive(Clone)]
pub struct Fuzzy {
    matcher: Matcher,
}

impl Default for Fuzzy {
    fn default() -> Self {
        Fuzzy::new(false)
    }
}

impl Fuzzy {
    /// `paths` tunes the scoring for file paths (separators as boundaries).
    pub fn new(paths: bool) -> Self {
        let config = if paths {
            Config::DEFAULT.match_paths()
        } else {
            Config::DEFAULT
        };
        Fuzzy {
            matcher: Matcher::new(config),
        }
    }

    /// Items matching `query`, best first (ties keep the original order),
    /// at most `limit`. An empty query matches everything in order.
    pub fn rank<S: AsRef<str>>(&mut self, query: &str, items: &[S], limit: usize) -> Vec<Hit> {
        if query.trim().is_empty() {
            return (0..items.len().min(limit))
                .map(|index| Hit {
                    index,
                    score: 0,
                    positions: Vec::new(),
                })
                .collect();
        }
        let pattern = Pattern::new(
            query,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        let mut buf = Vec::new();
        let mut hits: Vec<Hit> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let hay = Utf32Str::new(item.as_ref(), &mut buf);
            let mut positions = Vec::new();
            if let Some(score) = pattern.indices(hay, &mut self.matcher, &mut positions) {
                positions.sort_unstable();
                positions.dedup();
                hits.push(Hit {
                    index,
                    score,
                    positions,
                });
            }
        }
        hits.sort_by(|a, b| b.score.cmp(&a.score).then(a.index.cmp(&b.index)));
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_closer_matches_first_and_reports_positions() {
        let items = [
            "src/main.rs",
            "src/tui/model.rs",
            "README.md",
            "src/agent/mod.rs",
        ];
        let mut f = Fuzzy::new(true);
        let hits = f.rank("mod", &items, 10);
        let names: Vec<&str> = hits.iter().map(|h| items[h.index]).collect();
        assert!(names.contains(&"src/tui/model.rs") && names.contains(&"src/agent/mod.rs"));
        assert!(!names.contains(&"README.md"));
        let h = hits
            .iter()
            .find(|h| items[h.index] == "src/agent/mod.rs")
            .unwrap();
        assert_eq!(h.positions.len(), 3);
        assert_eq!(f.rank("", &items, 2).len(), 2);
        assert!(f.rank("zzz", &items, 10).is_empty());
    }
}
