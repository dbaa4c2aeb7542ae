//! A Python file's text from its bytes, as Python reads it (PEP 263): a
//! UTF-8 byte order mark, else an encoding declared in a comment on the
//! first or second line (`# -*- coding: latin-1 -*-`), else UTF-8.
//!
//! The single-byte encodings older code declares — Latin-1, Latin-9,
//! Windows-1252, ASCII — are read here; they keep every ASCII byte,
//! newlines included, so lines stay where they are. A file declaring any
//! other encoding is read as UTF-8 with the bytes that are not replaced,
//! and the note names the encoding.

use crate::index::lang::decode_utf8;

/// The text of a file and, when some bytes were replaced, why.
pub fn decode(bytes: Vec<u8>) -> (String, Option<String>) {
    if let Some(rest) = bytes.strip_prefix(b"\xef\xbb\xbf") {
        return decode_utf8(rest.to_vec());
    }
    let Some(name) = declared(&bytes).map(str::to_string) else {
        return decode_utf8(bytes);
    };
    let normal = name.to_ascii_lowercase().replace('_', "-");
    match normal.as_str() {
        "utf-8" | "utf8" | "utf-8-sig" | "u8" => decode_utf8(bytes),
        "latin-1" | "latin1" | "iso-8859-1" | "iso8859-1" | "8859" | "cp819" | "l1" | "latin"
        | "iso-latin-1" => (bytes.iter().map(|&b| char::from(b)).collect(), None),
        "iso-8859-15" | "iso8859-15" | "latin-9" | "latin9" | "l9" => {
            (bytes.iter().map(|&b| latin9(b)).collect(), None)
        }
        "cp1252" | "windows-1252" => (bytes.iter().map(|&b| cp1252(b)).collect(), None),
        "ascii" | "us-ascii" | "646" => match bytes.iter().position(|b| !b.is_ascii()) {
            None => (String::from_utf8(bytes).unwrap_or_default(), None),
            Some(at) => (
                bytes.iter().map(|&b| ascii(b)).collect(),
                Some(format!(
                    "not valid ASCII as declared (first bad byte at offset {at}); invalid bytes replaced"
                )),
            ),
        },
        _ => {
            let (text, _) = decode_utf8(bytes);
            let note = text.contains('\u{fffd}').then(|| {
                format!("declared encoding `{name}` is not read; bytes that are not UTF-8 replaced")
            });
            (text, note)
        }
    }
}

/// The encoding a coding comment on the first two lines declares.
fn declared(bytes: &[u8]) -> Option<&str> {
    let mut lines = bytes.split(|&b| b == b'\n');
    let first = lines.next()?;
    if let Some(name) = cookie(first) {
        return Some(name);
    }
    // The second line counts only below a comment or blank first line.
    if !is_comment_or_blank(first) {
        return None;
    }
    cookie(lines.next()?)
}

fn is_comment_or_blank(line: &[u8]) -> bool {
    let t = line.trim_ascii_start();
    t.is_empty() || t[0] == b'#'
}

/// `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` on one line.
fn cookie(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line).ok()?;
    let comment = text
        .trim_start_matches([' ', '\t', '\x0c'])
        .strip_prefix('#')?;
    let at = comment.find("coding")?;
    let rest = comment[at + "coding".len()..].strip_prefix([':', '='])?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn ascii(b: u8) -> char {
    if b.is_ascii() {
        char::from(b)
    } else {
        '\u{fffd}'
    }
}

/// ISO 8859-15: Latin-1 with eight places changed (the euro sign among them).
fn latin9(b: u8) -> char {
    match b {
        0xa4 => '€',
        0xa6 => 'Š',
        0xa8 => 'š',
        0xb4 => 'Ž',
        0xb8 => 'ž',
        0xbc => 'Œ',
        0xbd => 'œ',
        0xbe => 'Ÿ',
        _ => char::from(b),
    }
}

/// Windows-1252: Latin-1 with printable characters at 0x80–0x9f; its five
/// undefined places are read as the control characters Python's decoder
/// rejects, replaced.
fn cp1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{fffd}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{fffd}', 'Ž',
        '\u{fffd}', '\u{fffd}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ',
        '\u{fffd}', 'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9f => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn a_declared_latin_1_file_reads_as_latin_1() {
        let (text, note) = decode(b"# -*- coding: latin-1 -*-\n\"\"\"Caf\xe9.\"\"\"\n".to_vec());
        assert_eq!(text, "# -*- coding: latin-1 -*-\n\"\"\"Café.\"\"\"\n");
        assert_eq!(note, None);
        // On the second line below a shebang, and in vim's form.
        let (text, _) = decode(
            b"#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\nx = '\xa4'\n".to_vec(),
        );
        assert!(text.ends_with("x = '€'\n"), "{text}");
        let (text, _) = decode(b"# coding=cp1252\ns = '\x93q\x94'\n".to_vec());
        assert!(text.ends_with("s = '“q”'\n"), "{text}");
    }

    #[test]
    fn without_a_declaration_a_file_is_utf_8() {
        let (text, note) = decode("x = 'é'\n".as_bytes().to_vec());
        assert_eq!((text.as_str(), note), ("x = 'é'\n", None));
        let (text, note) = decode(b"\xef\xbb\xbfx = 1\n".to_vec());
        assert_eq!((text.as_str(), note), ("x = 1\n", None));
        // A cookie below code does not count.
        let (text, note) = decode(b"x = 1\ny = 2\n# coding: latin-1\nz = '\xe9'\n".to_vec());
        assert!(text.contains('\u{fffd}') && note.unwrap().contains("UTF-8"));
        let (_, note) = decode(b"import os\n# coding: latin-1\nz = '\xe9'\n".to_vec());
        assert!(note.is_some());
    }

    #[test]
    fn an_encoding_not_read_is_named() {
        let (text, note) = decode(b"# coding: euc-jp\nx = '\xa4\xa2'\n".to_vec());
        assert!(text.starts_with("# coding: euc-jp\n"));
        assert!(note.unwrap().contains("`euc-jp`"));
        let (_, note) = decode(b"# coding: euc-jp\nx = 1\n".to_vec());
        assert_eq!(note, None);
        let (_, note) = decode(b"# coding: ascii\nx = '\xe9'\n".to_vec());
        assert!(note.unwrap().contains("ASCII"));
    }
}
