use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(goldfish::front::cli::main())
}
