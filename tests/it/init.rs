//! `goldfish init`: idempotent, honours core.hooksPath and worktrees, keeps
//! foreign hooks.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::TestEnv;

fn snapshot_of_setup(repo: &Path, hooks: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (
            ".gitattributes".to_owned(),
            fs::read(repo.join(".gitattributes")).unwrap(),
        ),
        (
            "config".to_owned(),
            fs::read(repo.join(".git/config")).unwrap(),
        ),
    ];
    for hook in ["post-merge", "post-checkout", "post-rewrite"] {
        files.push((hook.to_owned(), fs::read(hooks.join(hook)).unwrap()));
    }
    files
}

#[test]
fn init_sets_everything_up_once() {
    let env = TestEnv::new();
    let repo = env.path().join("r");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q"]);
    fs::write(repo.join(".gitattributes"), "*.png binary").unwrap();
    let first = env.ok(&repo, &["init"]);
    assert!(first.contains("installed the post-merge hook"), "{first}");
    assert!(repo.join(".goldfish/memories").is_dir());
    assert_eq!(
        fs::read_to_string(repo.join(".gitattributes")).unwrap(),
        "*.png binary\n.goldfish/memories/*.jsonl merge=goldfish\n"
    );
    assert_eq!(
        env.git(&repo, &["config", "merge.goldfish.driver"]).trim(),
        "goldfish merge-driver %O %A %B %P"
    );
    assert!(
        !env.git(&repo, &["config", "merge.goldfish.name"])
            .trim()
            .is_empty()
    );
    let hooks = repo.join(".git/hooks");
    for hook in ["post-merge", "post-checkout", "post-rewrite"] {
        let mode = fs::metadata(hooks.join(hook)).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{hook} must be executable");
    }
    let before = snapshot_of_setup(&repo, &hooks);
    let second = env.ok(&repo, &["init"]);
    assert!(second.starts_with("goldfish is already set up"), "{second}");
    assert_eq!(
        snapshot_of_setup(&repo, &hooks),
        before,
        "a second init changes nothing"
    );
    // From a subdirectory too.
    fs::create_dir_all(repo.join("src/deep")).unwrap();
    assert!(
        env.ok(&repo.join("src/deep"), &["init"])
            .starts_with("goldfish is already set up")
    );
}

#[test]
fn init_honours_core_hooks_path() {
    let env = TestEnv::new();
    let repo = env.path().join("r");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q"]);
    env.git(&repo, &["config", "core.hooksPath", ".githooks"]);
    env.ok(&repo, &["init"]);
    assert!(repo.join(".githooks/post-merge").is_file());
    assert!(!repo.join(".git/hooks/post-merge").exists());

    // A hooks path outside the repository affects other repositories: refused
    // unless forced.
    let outside = env.path().join("global-hooks");
    env.git(
        &repo,
        &["config", "core.hooksPath", outside.to_str().unwrap()],
    );
    let refused = env.goldfish(&repo, &["init"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--force"));
    assert!(!outside.exists());
    env.ok(&repo, &["init", "--force"]);
    assert!(outside.join("post-checkout").is_file());
}

#[test]
fn init_keeps_a_foreign_hook_running() {
    let env = TestEnv::new();
    let repo = env.path().join("r");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q"]);
    let hook = repo.join(".git/hooks/post-checkout");
    fs::write(
        &hook,
        "#!/bin/sh\necho foreign >> \"$(git rev-parse --git-dir)/ran\"\nexit 3\n",
    )
    .unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let out = env.ok(&repo, &["init"]);
    assert!(out.contains("post-checkout.legacy"), "{out}");
    assert!(repo.join(".git/hooks/post-checkout.legacy").is_file());
    // Our shim runs the old hook first and keeps its exit status.
    let status = env
        .command(repo.join(".git/hooks/post-checkout"), &repo)
        .args(["0", "0", "1"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        fs::read_to_string(repo.join(".git/ran")).unwrap(),
        "foreign\n"
    );
    // Idempotent: the legacy hook is not moved again.
    assert!(
        env.ok(&repo, &["init"])
            .starts_with("goldfish is already set up")
    );
}

#[test]
fn init_in_a_linked_worktree_and_a_bare_repo() {
    let env = TestEnv::new();
    let repo = env.repo("main-wt", "Ada");
    env.commit_all(&repo, "goldfish");
    let linked = env.path().join("linked");
    env.git(&repo, &["worktree", "add", "-q", linked.to_str().unwrap()]);
    let out = env.ok(&linked, &["init"]);
    // Hooks and config are shared with the main worktree, already set up.
    assert!(out.starts_with("goldfish is already set up"), "{out}");
    env.ok(&linked, &["store", "Stored from a linked worktree"]);
    // The linked worktree has a tag of its own (its own git folder).
    let linked_file = crate::common::today(&linked);
    assert!(linked.join(&linked_file).is_file());
    env.ok(&repo, &["store", "Stored from the main worktree"]);
    assert_ne!(crate::common::today(&repo), linked_file);

    let bare = env.path().join("bare.git");
    env.git(
        env.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    let refused = env.goldfish(&bare, &["init"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("bare repository"));
}

#[test]
fn hooks_do_nothing_without_goldfish_on_path() {
    let mut env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.goldfish_on_path = false;
    let output = env
        .command(repo.join(".git/hooks/post-merge"), &repo)
        .arg("0")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(output.stdout.is_empty() && output.stderr.is_empty());
}

#[test]
fn init_says_what_readme_says_of_a_teammates_clone() {
    // README: a teammate's clone sets itself up at its first goldfish
    // command; init must not tell the user every clone has to run it.
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("teammate's clone sets itself up"),
        "README changed"
    );
    let env = TestEnv::new();
    let repo = env.path().join("r");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q"]);
    let said = env.ok(&repo, &["init"]);
    assert!(
        said.contains("a teammate's clone sets itself up at its first goldfish command"),
        "{said}"
    );
    assert!(!said.contains("each clone runs"), "{said}");
}
