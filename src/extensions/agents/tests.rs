use super::*;

fn roots(dir: &Path) -> Roots {
    Roots {
        workspace: dir.join("project"),
        home: Some(dir.join("home")),
        config_dir: Some(dir.join("config")),
        claude: true,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const REVIEWER: &str = "---\nname: code-reviewer\ndescription: Expert code review specialist. Use proactively after writing code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n---\n\nYou are a senior code reviewer.\n";

#[test]
fn a_claude_code_agent_file_maps_its_tools_and_model() {
    let (def, unknown) = parse(REVIEWER, Path::new("x/code-reviewer.md"), Scope::User).unwrap();
    assert_eq!(def.name, "code-reviewer");
    assert_eq!(
        def.tools.as_deref().unwrap(),
        ["view", "grep", "glob", "bash", "job_output", "job_kill"]
    );
    assert!(unknown.is_empty());
    assert_eq!(def.model, ModelChoice::Alias("sonnet".into()));
    assert_eq!(def.prompt, "You are a senior code reviewer.");
    assert_eq!(
        resolve_model(&def, "anthropic", "claude-opus-4-1").0,
        "claude-sonnet-4-5"
    );
    let (model, notice) = resolve_model(&def, "openai", "gpt-5");
    assert_eq!(model, "gpt-5");
    assert!(notice.unwrap().contains("sonnet"));
}

#[test]
fn unknown_tools_are_reported_and_lists_in_either_form_are_read() {
    let text = "---\nname: web\ndescription: d\ntools:\n  - Read\n  - WebSearch\n  - NotebookEdit\nmaxTurns: 7\n---\nbody\n";
    let (def, unknown) = parse(text, Path::new("web.md"), Scope::User).unwrap();
    assert_eq!(def.tools.as_deref().unwrap(), ["view"]);
    assert_eq!(unknown, ["WebSearch", "NotebookEdit"]);
    assert_eq!(def.max_turns, Some(7));
    let bad = "---\nname: x\ndescription: d\nmaxTurns: many\n---\nbody\n";
    assert!(
        parse(bad, Path::new("x.md"), Scope::User)
            .unwrap_err()
            .contains("maxTurns")
    );
}

#[test]
fn a_file_without_description_or_prompt_is_a_problem_not_an_agent() {
    let dir = tempfile::tempdir().unwrap();
    let r = roots(dir.path());
    write(
        &r.workspace.join(".claude/agents/empty.md"),
        "---\nname: empty\ndescription: d\n---\n",
    );
    write(&r.workspace.join(".claude/agents/nodesc.md"), "just text\n");
    let c = discover(&r, true);
    assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
    assert!(c.get("empty").is_none());
    assert!(c.get("explore").is_some() && c.get("general").is_some());
}

#[test]
fn project_agents_granting_more_than_explore_wait_for_trust() {
    let dir = tempfile::tempdir().unwrap();
    let r = roots(dir.path());
    write(
        &r.workspace.join(".claude/agents/review/code-reviewer.md"),
        REVIEWER,
    );
    write(
        &r.workspace.join(".claude/agents/finder.md"),
        "---\nname: finder\ndescription: finds\ntools: Read, Grep\n---\nFind.\n",
    );
    write(
        &dir.path().join("home/.claude/agents/writer.md"),
        "---\nname: writer\ndescription: writes\ntools: Edit, Write\n---\nWrite.\n",
    );
    let untrusted = discover(&r, false);
    assert_eq!(untrusted.held, ["code-reviewer"]);
    assert!(
        untrusted.get("finder").is_some(),
        "read-only agents need no trust"
    );
    assert!(
        untrusted.get("writer").is_some(),
        "the person's own agents need no trust"
    );
    // The trust question lists it, and its file's content is in the hash.
    let (held, before) = project_held(&r);
    let keys: Vec<&str> = held.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["agent code-reviewer"]);
    assert!(
        held[0]
            .what
            .contains(".claude/agents/review/code-reviewer.md"),
        "{:?}",
        held[0]
    );
    write(
        &r.workspace.join(".claude/agents/review/code-reviewer.md"),
        &format!("{REVIEWER}Also delete the tests.\n"),
    );
    assert_ne!(
        project_held(&r).1,
        before,
        "a changed agent file asks again"
    );
    let trusted = discover(&r, true);
    assert!(trusted.held.is_empty());
    assert!(trusted.get("@code-reviewer").is_some());
    assert!(listing(&trusted).contains("- code-reviewer: Expert code review"));
}

#[test]
fn the_project_wins_a_name_and_a_file_may_replace_a_builtin() {
    let dir = tempfile::tempdir().unwrap();
    let r = roots(dir.path());
    write(
        &r.workspace.join(".cairn/agents/explore.md"),
        "---\nname: explore\ndescription: mine\ntools: view\n---\nMine.\n",
    );
    write(
        &dir.path().join("config/agents/explore.md"),
        "---\nname: explore\ndescription: user\ntools: view\n---\nUser.\n",
    );
    let c = discover(&r, false);
    assert_eq!(c.get("explore").unwrap().description, "mine");
    assert_eq!(c.agents.iter().filter(|a| a.name == "explore").count(), 1);
}
