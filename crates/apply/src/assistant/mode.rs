//! `--mode auto`: which capture mode a request gets.
//!
//! The rule, in order (the first that holds decides):
//!
//! 1. **SELECTED** (`selection`) — the session has a selection and the
//!    request points at it: one of its words is a pointing word
//!    ([`POINTING_WORDS`]: *this, these, those, selected, selection,
//!    here*; *dies, diese, dieser, …, ausgewählt, markiert, hier*).
//!    Without a selection a pointing word points at nothing, and the rule
//!    goes on.
//! 2. **MINIMAL** (`general-question`) — the request is a general question
//!    about modelling, not about this model: its first word is a question
//!    opener ([`QUESTION_OPENERS`]: *how, what, why, explain, describe*;
//!    *wie, was, warum, wieso, erkläre, …*), it names nothing of the
//!    graph (no word is a node's name, no semantic ID of the graph), and
//!    it does not speak of the model as a whole ([`MODEL_WORDS`]: *model,
//!    graph, system, architecture, diagram, canvas*; *Modell, Graph,
//!    System, Architektur, …*).
//! 3. **FULL** (`default`) — everything else: a change, an analysis, or a
//!    question about named elements needs the whole graph.
//!
//! Words are compared case-insensitively after splitting the request at
//! every character that is not a letter, digit, `_`, `-` or `.` (so
//! `ManageFleet.UC.001` stays one word and "thistle" is not "this").
//! Node names are compared as whole words, and multi-word names as the
//! same word sequence. The seed's examples come out as it wants them:
//! "How do I create a new function?" is MINIMAL, "Add tests for the
//! selected function" is SELECTED (with a selection), "Validate the entire
//! system architecture" is FULL.

use serde::Serialize;

use crate::capture::Mode;

/// Words that point at the canvas selection.
pub const POINTING_WORDS: &[&str] = &[
    "this",
    "these",
    "those",
    "selected",
    "selection",
    "here",
    "dies",
    "diese",
    "dieser",
    "dieses",
    "diesen",
    "diesem",
    "ausgewählt",
    "ausgewählte",
    "ausgewählten",
    "ausgewählter",
    "auswahl",
    "markiert",
    "markierte",
    "markierten",
    "hier",
];

/// First words of a general question.
pub const QUESTION_OPENERS: &[&str] = &[
    "how",
    "what",
    "why",
    "explain",
    "describe",
    "wie",
    "was",
    "warum",
    "wieso",
    "weshalb",
    "erkläre",
    "erklär",
    "erklären",
    "beschreibe",
];

/// Words that speak of the model as a whole.
pub const MODEL_WORDS: &[&str] = &[
    "model",
    "models",
    "graph",
    "system",
    "systems",
    "architecture",
    "diagram",
    "canvas",
    "ontology",
    "modell",
    "modells",
    "graphen",
    "systeme",
    "architektur",
    "diagramm",
    "ontologie",
];

/// Which mode a request got, and by which rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModeChoice {
    /// What was asked for: `auto` or a mode's name.
    pub requested: String,
    pub mode: Mode,
    /// `selection`, `general-question`, `default`, or `explicit`.
    pub rule: &'static str,
}

impl ModeChoice {
    pub fn explicit(mode: Mode) -> ModeChoice {
        ModeChoice {
            requested: mode.name().to_ascii_lowercase(),
            mode,
            rule: "explicit",
        }
    }
}

/// What the rule looks at besides the request.
pub struct Facts<'a> {
    pub has_selection: bool,
    /// Names and semantic IDs of the graph's nodes.
    pub node_names: &'a [String],
}

/// The request's words, lowercased.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Apply the rule.
pub fn choose(request: &str, facts: &Facts) -> ModeChoice {
    let w = words(request);
    let auto = |mode, rule| ModeChoice {
        requested: "auto".into(),
        mode,
        rule,
    };
    if facts.has_selection && w.iter().any(|x| POINTING_WORDS.contains(&x.as_str())) {
        return auto(Mode::Selected, "selection");
    }
    let opener = w
        .first()
        .is_some_and(|x| QUESTION_OPENERS.contains(&x.as_str()));
    if opener
        && !w.iter().any(|x| MODEL_WORDS.contains(&x.as_str()))
        && !names_an_element(&w, facts.node_names)
    {
        return auto(Mode::Minimal, "general-question");
    }
    auto(Mode::Full, "default")
}

/// Whether the words contain one of `names` as a whole word sequence.
fn names_an_element(words: &[String], names: &[String]) -> bool {
    names.iter().any(|name| {
        let n = self::words(name);
        !n.is_empty() && words.windows(n.len()).any(|win| win == n.as_slice())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(request: &str, selection: bool) -> (Mode, &'static str) {
        let names: Vec<String> = ["ManageFleet", "ManageFleet.UC.001", "Process Payment"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = choose(
            request,
            &Facts {
                has_selection: selection,
                node_names: &names,
            },
        );
        (c.mode, c.rule)
    }

    #[test]
    fn the_seed_examples() {
        assert_eq!(
            pick("How do I create a new function?", false),
            (Mode::Minimal, "general-question")
        );
        assert_eq!(
            pick("Add tests for the selected function", true),
            (Mode::Selected, "selection")
        );
        assert_eq!(
            pick("Validate the entire system architecture", false),
            (Mode::Full, "default")
        );
    }

    #[test]
    fn pointing_needs_a_selection_and_whole_words() {
        assert_eq!(
            pick("Add tests for the selected function", false).0,
            Mode::Full
        );
        assert_eq!(pick("Rename this to Billing", true).0, Mode::Selected);
        assert_eq!(
            pick("Füge diesem Use Case eine Funktion hinzu", true).0,
            Mode::Selected
        );
        // "thistle" is not "this"; "that" is not a pointing word.
        assert_eq!(
            pick("Add a thistle function that grows", true).0,
            Mode::Full
        );
    }

    #[test]
    fn questions_about_named_elements_or_the_model_are_full() {
        assert_eq!(pick("What does ManageFleet do?", false).0, Mode::Full);
        assert_eq!(pick("what is ManageFleet.UC.001 for", false).0, Mode::Full);
        assert_eq!(pick("Why is process payment slow?", false).0, Mode::Full);
        assert_eq!(pick("What is missing in my model?", false).0, Mode::Full);
        assert_eq!(pick("Explain the system", false).0, Mode::Full);
        assert_eq!(pick("What is a FCHAIN?", false).0, Mode::Minimal);
        assert_eq!(
            pick("Wie lege ich eine Anforderung an?", false).0,
            Mode::Minimal
        );
        // A request phrased as a question is still a request.
        assert_eq!(pick("Can you add a payment function?", false).0, Mode::Full);
        assert_eq!(
            pick("Add a payment function under ManageFleet", false).0,
            Mode::Full
        );
        assert_eq!(pick("", false).0, Mode::Full);
    }
}
