//! `layout-diff generate man|bash|zsh|fish`: the man page (clap_mangen) and the shell
//! completions (clap_complete), generated from the same clap definitions as `--help`.

use anyhow::Result;
use clap::CommandFactory;

use super::Output;
use super::args::{Cli, GenerateArgs, Generated};

/// Renders what was asked to a string for stdout.
pub fn generate(args: &GenerateArgs) -> Result<Output> {
    let cmd = Cli::command();
    let mut bytes = Vec::new();
    match args.what {
        Generated::Man => clap_mangen::Man::new(cmd).render(&mut bytes)?,
        Generated::Bash => completion(clap_complete::Shell::Bash, cmd, &mut bytes),
        Generated::Zsh => completion(clap_complete::Shell::Zsh, cmd, &mut bytes),
        Generated::Fish => completion(clap_complete::Shell::Fish, cmd, &mut bytes),
    }
    Ok(Output {
        text: String::from_utf8(bytes)?,
        code: 0,
        note: None,
    })
}

fn completion(shell: clap_complete::Shell, mut cmd: clap::Command, out: &mut Vec<u8>) {
    clap_complete::generate(shell, &mut cmd, "layout-diff", out);
}
