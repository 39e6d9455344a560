//! The control: an honest session's commands, in the same fixture, leave no
//! trace the suite counts as an escape. Without it an escape reported by
//! another case could be the fixture's own noise.

use crate::escape_fixture::{Fixture, assert_contained};
use crate::mock_model::{Format, MockModel, Reply};
use crate::{bash, put};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_session_leaves_nothing_the_suite_counts() {
    let f = Fixture::new();
    let mock = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            put("c1", "notes.md", "# notes\nthe build is green\n"),
            bash("c2", "cat notes.md && ls -la && git status --short && mkdir -p src && echo 'fn main() {}' > src/main.rs"),
            Reply::text("Wrote the notes."),
        ]),
    )
    .await;
    let before = f.snapshot();
    f.run(&mock, "smart").await;
    let escapes = f.escapes(&mock, &before);
    assert!(
        f.ws.join("src/main.rs").exists(),
        "the honest command did not run; the fixture is broken"
    );
    assert_contained("control: an honest session (smart)", &escapes);
}
