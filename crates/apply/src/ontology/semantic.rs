//! Semantic IDs: `{Name}.{TypeAbbrev}.{Counter}` (seed 001 §6.2), e.g.
//! `ParseInput.FN.001`.
//!
//! The name part is the node's name reduced to characters that keep a
//! Format E edge line unambiguous (letters, digits, `_`, `-`; words are
//! joined in CamelCase). The counter is at least three digits and comes
//! from a per-type counter that never goes back, so an ID is never handed
//! out twice — not even after its node is deleted.

use super::{NodeType, OntologyError, Result};

/// A parsed semantic ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticId<'a> {
    pub name: &'a str,
    pub node_type: NodeType,
    pub number: u32,
}

/// Split `Name.TY.NNN` (the name may itself contain dots).
pub fn parse(id: &str) -> Result<SemanticId<'_>> {
    let bad = || OntologyError::BadSemanticId(id.to_string());
    let (rest, num) = id.rsplit_once('.').ok_or_else(bad)?;
    let (name, ty) = rest.rsplit_once('.').ok_or_else(bad)?;
    if name.is_empty()
        || num.len() < 3
        || !num.bytes().all(|b| b.is_ascii_digit())
        || !name.chars().all(name_char_ok)
    {
        return Err(bad());
    }
    let node_type = NodeType::from_abbrev(ty).ok_or_else(bad)?;
    let number: u32 = num.parse().map_err(|_| bad())?;
    if number == 0 {
        return Err(bad());
    }
    Ok(SemanticId {
        name,
        node_type,
        number,
    })
}

fn name_char_ok(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// The name part for a node name: words joined in CamelCase, characters
/// other than letters, digits, `_` and `-` dropped; `Node` when nothing is left.
pub fn name_part(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(|c: char| c.is_whitespace() || c == '.' || c == '/') {
        let mut chars = word
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-');
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() {
        "Node".to_string()
    } else {
        out
    }
}

/// `Name.TY.NNN`.
pub fn format(name: &str, node_type: NodeType, number: u32) -> String {
    format!("{}.{}.{:03}", name_part(name), node_type.abbrev(), number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses() {
        assert_eq!(format("ParseInput", NodeType::Func, 1), "ParseInput.FN.001");
        assert_eq!(
            format("Bestellung aufgeben", NodeType::Uc, 12),
            "BestellungAufgeben.UC.012"
        );
        assert_eq!(
            format("REQ-InputValidation", NodeType::Req, 3),
            "REQ-InputValidation.RQ.003"
        );
        assert_eq!(format("x|y", NodeType::Req, 1000), "Xy.RQ.1000");
        let p = parse("REQ-InputValidation.RQ.003").unwrap();
        assert_eq!(p.name, "REQ-InputValidation");
        assert_eq!(p.node_type, NodeType::Req);
        assert_eq!(p.number, 3);
        for bad in [
            "",
            "Foo",
            "Foo.FN",
            "Foo.XX.001",
            "Foo.FN.1",
            "Foo.FN.000",
            ".FN.001",
            "a b.FN.001",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
