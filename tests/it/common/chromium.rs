//! Headless Chromium (Debian's `chromium`) as a test client for the pages
//! `graphctx view` writes: load a page, read the document after its
//! script ran (`--dump-dom`), take a screenshot. Each run gets a fresh
//! profile and no network features, and is killed if it hangs.
//!
//! The page reports what it drew in `data-*` attributes of `<body>` and
//! takes test actions from the URL fragment (`#click=KEY`, `#hops=N`,
//! `#rels=a,b`), so a run needs no DevTools connection.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs it (scripts/install-test-clients.sh).
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The window every run uses.
pub const WINDOW: &str = "1280,800";
/// Longer than any page load here takes; a run past it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(90);

pub struct Chromium {
    program: PathBuf,
}

impl Chromium {
    /// The installed browser, or `None` when it is not installed.
    pub fn find() -> Option<Chromium> {
        let program = PathBuf::from(CHROMIUM);
        program.is_file().then_some(Chromium { program })
    }

    /// The document of `page` (with `fragment` after `#`) once its
    /// script has run, serialised.
    pub fn dump_dom(&self, page: &Path, fragment: &str) -> String {
        let out = self.run(&["--dump-dom".to_string(), url(page, fragment)]);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// A PNG of `page` as shown in the window, written to `png`.
    pub fn screenshot(&self, page: &Path, fragment: &str, png: &Path) {
        let _ = std::fs::remove_file(png);
        self.run(&[
            format!("--screenshot={}", png.display()),
            url(page, fragment),
        ]);
        let bytes =
            std::fs::read(png).unwrap_or_else(|_| panic!("no screenshot at {}", png.display()));
        assert!(
            bytes.starts_with(b"\x89PNG"),
            "{} is not a PNG",
            png.display()
        );
    }

    fn run(&self, args: &[String]) -> Vec<u8> {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(&self.program)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
            ])
            .arg(format!("--window-size={WINDOW}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut buf).ok();
            buf
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > RUN_LIMIT {
                child.kill().ok();
                child.wait().ok();
                panic!("chromium did not finish within {RUN_LIMIT:?}: {args:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "chromium failed ({status}): {args:?}");
        reader.join().unwrap()
    }
}

/// `file://` URL of `page`, percent-encoded, with a fragment.
pub fn url(page: &Path, fragment: &str) -> String {
    let abs = page.canonicalize().unwrap();
    let mut u = format!("file://{}", percent_encode(&abs.to_string_lossy(), "/"));
    if !fragment.is_empty() {
        u.push('#');
        u.push_str(fragment);
    }
    u
}

/// `text` with every byte outside `A-Za-z0-9-_.~` and `keep` as `%XX`
/// (a fragment value: `#click=` + `percent_encode(key, "")`).
pub fn percent_encode(text: &str, keep: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || keep.as_bytes().contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The value of `name` on the `<body>` element of a dumped document.
pub fn body_attr(dom: &str, name: &str) -> Option<String> {
    let start = dom.find("<body")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let needle = format!(" {name}=\"");
    let at = tag.find(&needle)? + needle.len();
    let len = tag[at..].find('"')?;
    Some(unescape(&tag[at..at + len]))
}

/// The text of the element with `id` (its markup stripped, character
/// references decoded): what a reader sees there.
pub fn element_text(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!(" id=\"{id}\""))?;
    let open = dom[..at].rfind('<')?;
    let tag: String = dom[open + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let content_start = at + dom[at..].find('>')? + 1;
    // Nested elements of the same name are counted.
    let (open_tag, close_tag) = (format!("<{tag}"), format!("</{tag}>"));
    let mut depth = 1;
    let mut pos = content_start;
    let end = loop {
        let next_close = pos + dom[pos..].find(&close_tag)?;
        match dom[pos..next_close].find(&open_tag) {
            Some(o) => {
                depth += 1;
                pos += o + open_tag.len();
            }
            None => {
                depth -= 1;
                if depth == 0 {
                    break next_close;
                }
                pos = next_close + close_tag.len();
            }
        }
    };
    Some(unescape(&strip_tags(&dom[content_start..end])))
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}
