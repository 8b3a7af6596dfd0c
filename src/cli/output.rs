//! Output files of the CLI, written safely.

use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Checks, before any work starts, that the file `path` given as `option` (e.g. `--report`)
/// can be written: it is not an existing directory, and its parent is an existing directory
/// this process may create files in. A run that would lose its result at the end stops here
/// with the option, the path, what is wrong and the fix.
pub fn check_output_path(option: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        bail!("{option}: the path is empty; give a file name");
    }
    if path.is_dir() {
        bail!(
            "{option} {shown}: is a directory, and this option writes a file; name a file \
             (e.g. {})",
            path.join("out.json").display()
        );
    }
    if path.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) {
        bail!("{option} {shown}: ends in a path separator, so it names a directory; name a file");
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    check_directory(option, path, parent)
}

/// Checks, before any work starts, that the folder `dir` given as `option` (e.g. `sweep
/// --out`) can be filled: it is a writable directory, or it does not exist yet and its
/// nearest existing ancestor is a writable directory (it is created when written).
pub fn check_output_dir(option: &str, dir: &Path) -> anyhow::Result<()> {
    if dir.as_os_str().is_empty() {
        bail!("{option}: the path is empty; give a folder name");
    }
    let mut existing = dir;
    while !existing.exists() {
        existing = match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    if existing == dir && !dir.is_dir() {
        bail!(
            "{option} {}: is a file, and this option writes a folder of files; choose a folder \
             path, or move the file away",
            dir.display()
        );
    }
    check_directory(option, dir, existing)
}

/// `dir` (the directory an output `path` goes in) exists, is a directory, and accepts a new
/// file (probed by creating and removing one, so permissions, read-only mounts and ACLs all
/// count).
fn check_directory(option: &str, path: &Path, dir: &Path) -> anyhow::Result<()> {
    let (shown, dir_shown) = (path.display(), dir.display());
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{option} {shown}: directory {dir_shown} does not exist; create it first \
             (`mkdir -p {dir_shown}`) or choose another path"
        ),
        Err(e) => bail!(
            "{option} {shown}: directory {dir_shown} cannot be inspected ({e}); check its \
             permissions or choose another path"
        ),
        Ok(m) if !m.is_dir() => bail!(
            "{option} {shown}: {dir_shown} is a file, not a directory; choose a path inside a \
             directory"
        ),
        Ok(_) => {}
    }
    let probe = dir.join(format!(".switchyard-write-check-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(file) => {
            drop(file);
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => bail!(
            "{option} {shown}: cannot create files in directory {dir_shown} ({e}); choose a \
             writable directory or fix its permissions (`chmod u+w {dir_shown}`)"
        ),
    }
}

/// Writes `path` through a temporary file renamed into place, so a failed write leaves no
/// half-written output behind.
pub fn write_file(
    path: &Path,
    gz: bool,
    body: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).with_context(|| {
        format!("cannot create {}; check that its directory exists and is writable", tmp.display())
    })?;
    let result = if gz {
        let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        body(&mut enc).and_then(|()| enc.finish().map(drop).map_err(anyhow::Error::from))
    } else {
        let mut file = std::io::BufWriter::new(file);
        body(&mut file).and_then(|()| file.flush().map_err(anyhow::Error::from))
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {} failed", path.display())));
    }
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: anyhow::Result<()>) -> String {
        format!("{:#}", result.expect_err("the check should fail"))
    }

    fn assert_has(message: &str, parts: &[&str]) {
        for p in parts {
            assert!(message.contains(p), "message lacks {p:?}: {message}");
        }
    }

    #[test]
    fn a_file_in_an_existing_directory_passes_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        check_output_path("--report", &dir.path().join("r.json")).unwrap();
        // An existing file is replaced, so it passes too.
        std::fs::write(dir.path().join("old.json"), "{}").unwrap();
        check_output_path("--report", &dir.path().join("old.json")).unwrap();
        let left: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("old.json")], "the probe is removed");
        // A bare file name goes in the working directory.
        check_output_path("--report", Path::new("switchyard-check-test.json")).unwrap();
    }

    #[test]
    fn a_missing_parent_directory_names_the_option_the_path_and_mkdir() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join("no/such");
        let path = parent.join("r.json");
        let m = message(check_output_path("--report", &path));
        assert_has(
            &m,
            &[
                "--report",
                &path.display().to_string(),
                &format!("directory {} does not exist", parent.display()),
                &format!("mkdir -p {}", parent.display()),
            ],
        );
    }

    #[test]
    fn a_directory_as_an_output_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let m = message(check_output_path("--trace", dir.path()));
        assert_has(
            &m,
            &["--trace", &dir.path().display().to_string(), "is a directory", "name a file"],
        );
        let slash = format!("{}/new/", dir.path().display());
        let m = message(check_output_path("--trace", Path::new(&slash)));
        assert_has(&m, &["--trace", &slash, "names a directory"]);
        assert_has(&message(check_output_path("--trace", Path::new(""))), &["--trace", "empty"]);
    }

    #[test]
    fn a_file_as_the_parent_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let m = message(check_output_path("--output", &file.join("g.mtx")));
        assert_has(&m, &["--output", &format!("{} is a file, not a directory", file.display())]);
        let m = message(check_output_dir("--out", &file.join("sweep")));
        assert_has(&m, &["--out", &format!("{} is a file, not a directory", file.display())]);
    }

    #[test]
    fn output_folders_may_be_missing_but_not_files() {
        let dir = tempfile::tempdir().unwrap();
        check_output_dir("--out", dir.path()).unwrap();
        check_output_dir("--out", &dir.path().join("a/b/c")).unwrap();
        assert!(!dir.path().join("a").exists(), "checking creates nothing");
        let file = dir.path().join("sweep.csv");
        std::fs::write(&file, "x").unwrap();
        let m = message(check_output_dir("--out", &file));
        assert_has(&m, &["--out", &file.display().to_string(), "is a file", "choose a folder"]);
    }

    #[test]
    #[cfg(unix)]
    fn a_read_only_directory_is_refused_unless_running_as_root() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let result = check_output_path("--report", &locked.join("r.json"));
        let writable = std::fs::File::create(locked.join("probe")).is_ok();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        if writable {
            println!("skipping: this process writes into a mode-555 directory (running as root?)");
            return;
        }
        let m = message(result);
        assert_has(
            &m,
            &[
                "--report",
                &format!("cannot create files in directory {}", locked.display()),
                "chmod u+w",
            ],
        );
    }
}
