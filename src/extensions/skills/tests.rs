use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn roots(project: &Path, home: &Path) -> Roots {
    Roots {
        workspace: project.to_path_buf(),
        home: Some(home.to_path_buf()),
        config_dir: Some(home.join(".config/cairn")),
        claude: true,
    }
}

const PDF_SKILL: &str = "---
name: pdf-processing
description: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files.
allowed-tools: Bash(pdftotext:*) Read
---
# PDF Processing

Run `scripts/extract.py` for text.
";

#[test]
fn skills_are_found_near_the_cwd_first_then_root_then_home() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    write(&p.join(".claude/skills/pdf/SKILL.md"), PDF_SKILL);
    write(
        &p.join("sub/.agents/skills/pdf/SKILL.md"),
        "---\nname: pdf-processing\ndescription: the nearer one\n---\nnear\n",
    );
    write(
        &home.path().join(".claude/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Take notes\ndisable-model-invocation: true\n---\nn\n",
    );
    write(
        &p.join(".cairn/skills/broken/SKILL.md"),
        "---\nname: broken\n---\nno description\n",
    );
    let (skills, problems) = discover(&roots(p, home.path()), &p.join("sub"));
    let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["notes", "pdf-processing"]);
    assert_eq!(skills[1].description, "the nearer one");
    assert!(!skills[0].model_invocable && skills[0].user_invocable);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("no `description`"), "{problems:?}");
    // From the root, the root's own.
    let (skills, _) = discover(&roots(p, home.path()), p);
    let pdf = skills.iter().find(|s| s.name == "pdf-processing").unwrap();
    assert_eq!(pdf.allowed_tools, ["Bash(pdftotext:*)", "Read"]);
    assert!(pdf.body.contains("scripts/extract.py"));
}

#[test]
fn the_prompt_lists_names_and_descriptions_only_and_says_when_it_cut() {
    let skill = |i: usize| Skill {
        name: format!("skill-{i:02}"),
        description: format!("Does task number {i}"),
        allowed_tools: Vec::new(),
        model_invocable: i != 3,
        user_invocable: true,
        argument_hint: String::new(),
        body: "SECRET BODY".into(),
        dir: PathBuf::from("/x"),
        scope: Scope::User,
        text_hash: String::new(),
    };
    let skills: Vec<Skill> = (0..50).map(skill).collect();
    let full = prompt_section(&skills, PROMPT_CAP);
    assert!(full.contains("- skill-07: Does task number 7\n"));
    assert!(
        !full.contains("skill-03"),
        "a skill the model may not use is not listed"
    );
    assert!(!full.contains("SECRET BODY"));
    let cut = prompt_section(&skills, 600);
    assert!(cut.len() < 800);
    assert!(
        cut.contains("more skills are installed but not listed"),
        "{cut}"
    );
    assert_eq!(prompt_section(&[], PROMPT_CAP), "");
}
