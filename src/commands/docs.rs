//! `quire completions SHELL` and `quire man [--out DIR]`, generated from the
//! clap definition so they never drift from the real command line.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn completions(shell: Shell, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "quire", out);
    Ok(())
}

/// The main page on `out`, or (with `dir`) `quire.1` plus one page per
/// subcommand written into `dir`, whose names are then listed on `out`.
/// The main page also says what an operator looks for: the files quire
/// reads and writes, its environment, its signals, its exit status and
/// how it runs as a service.
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match dir {
        None => main_page(cmd, out).context("cannot write the man page"),
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd.clone(), dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            let main = dir.join("quire.1");
            let mut file = std::fs::File::create(&main)
                .with_context(|| format!("cannot write {}", main.display()))?;
            main_page(cmd, &mut file)
                .with_context(|| format!("cannot write {}", main.display()))?;
            let mut names: Vec<String> = std::fs::read_dir(dir)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("quire") && n.ends_with(".1"))
                .collect();
            names.sort();
            for name in names {
                writeln!(out, "{}", dir.join(name).display())?;
            }
            Ok(())
        }
    }
}

/// `quire.1`: clap's sections, then the operator's.
fn main_page(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    out.write_all(OPERATOR_SECTIONS.as_bytes())?;
    man.render_version_section(out)
}

/// FILES, ENVIRONMENT, SIGNALS, EXIT STATUS and running as a service, in
/// roff.
const OPERATOR_SECTIONS: &str = r#".SH FILES
.TP
\fI/etc/quire/config.toml\fR
The system configuration; \fI/etc/quire/modes/*.toml\fR adds modes.
.TP
\fI$XDG_CONFIG_HOME/quire/config.toml\fR
The user's configuration (\fI~/.config/quire/config.toml\fR); each
\fB\-\-config\fR file is read after it.
.TP
\fI$XDG_DATA_HOME/quire\fR
The data directory (\fI~/.local/share/quire\fR; the service's is
\fI/var/lib/quire\fR): \fIprojects/\fR (one directory a project:
project.toml, scene.json, ops.log, history.json, blobs/), \fImemory/\fR
(imported TMX files), \fIlogs/\fR (the TUI's log), \fIdrafts/\fR (the
TUI's unsaved drafts). Files are created readable by their owner only.
.TP
\fI/etc/quire/token\fR, \fI/etc/quire/users/\fR
The service's token and each user's token file, handed to it as systemd
credentials.
.SH ENVIRONMENT
.TP
\fBQUIRE_\fR\fISECTION\fR\fB__\fR\fIKEY\fR
Any configuration key, e.g. \fBQUIRE_SERVER__PORT=8080\fR; above the
files, below the command line's flags.
.TP
\fBQUIRE_SYSTEM_CONFIG_DIR\fR
Where the system configuration is read instead of \fI/etc/quire\fR.
.TP
\fBRUST_LOG\fR
Log filter, when neither \fB\-\-log\-level\fR nor \fB\-q\fR/\fB\-v\fR is given.
.TP
\fBNO_COLOR\fR
No colour in the log.
.TP
\fBNOTIFY_SOCKET\fR, \fBCREDENTIALS_DIRECTORY\fR
Set by systemd: readiness, reloading and stopping are reported; a
\fItoken_file\fR of \fB%d/\fR\fINAME\fR is read from the credentials
directory.
.TP
\fBWATCHDOG_USEC\fR
Set by systemd with \fBWatchdogSec=\fR: a server tells systemd it is
alive at twice that rate.
.SH SIGNALS
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Stop: requests in flight may finish (5 s), every project is saved and
closed, then quire exits 0.
.TP
\fBSIGHUP\fR
A server reloads its configuration: the users and their tokens, the
allowed hosts and origins, the trusted proxy, the log level, and the
engine and provider settings take effect at once, and the log says what
changed; changed settings that need a restart (addresses, limits,
directories, storage, history) are logged and keep their running value.
A configuration that does not load changes nothing (logged as an error,
and told to systemd as its status), and so does one that would leave a
server started with tokens without any, or names a token file that
cannot be read. A user it removes, or whose token or role it lowers,
loses their open event streams and MCP sessions at once.
\fBquire reload\fR \fIPID\fR sends it and exits 1 when the server
refused the configuration.
Other modes stop, as for SIGTERM (a closed terminal).
.SH EXIT STATUS
.TP
\fB0\fR
Success.
.TP
\fB1\fR
A runtime failure (a project could not be opened or saved, a port could
not be bound, a file could not be written).
.TP
\fB2\fR
A usage or configuration error: nothing was done.
.TP
\fB3\fR
\fBquire batch\fR only: the exports were written, but an entry of the
input was skipped or a page failed in a step; \fIreport.json\fR names
each.
.SH RUNNING AS A SERVICE
The package installs \fIquire\-headless.service\fR, which runs
\fBquire \-\-mode headless \-\-data\-dir /var/lib/quire\fR as a dynamic
user with its state in \fI/var/lib/quire\fR. Set its address in
\fI/etc/quire/config.toml\fR and its token in \fI/etc/quire/token\fR, or
give each person a \fB[[server.users]]\fR entry with a token file under
\fI/etc/quire/users/\fR (\fItoken_file = "%d/users_NAME"\fR), then
\fBsystemctl enable \-\-now quire\-headless\fR. Reload after changing users
with \fBsystemctl reload quire\-headless\fR, which fails, keeping the
running configuration, when the new one does not load. Back up with \fBquire backup
\-\-data\-dir /var/lib/quire \-\-out FILE.tar\fR (safe while it runs) and
restore with \fBquire restore FILE.tar \-\-data\-dir DIR\fR.
"#;
