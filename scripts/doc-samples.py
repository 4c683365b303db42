#!/usr/bin/env python3
"""Turns every Swift sample of README.md and the DocC articles into programs the compiler checks, and runs them.

Each document becomes one program, Sources/DocSamples<Name>/main.swift (not kept in git: Package.swift adds an
executable target for each one it finds), with its samples in the order the document gives them, so a sample may use
what an earlier one of the same document declared. `scripts/test.sh` generates them, builds them, then runs each one
(`--run`) in a directory of its own (its working and temporary directory), failing on a nonzero exit or a program
that has not ended in two minutes.

What the text says a sample prints is checked when it runs: a line `print(VALUE)   // TEXT` prints VALUE and stops
the program unless it printed TEXT.

An HTML comment just before a sample (invisible on GitHub and in DocC) says how it is compiled:
  <!-- sample: scope -->            in a `do { }` of its own, so that its names may repeat an earlier sample's
  <!-- sample: setup CODE -->       CODE first (any number of lines), unseen by the reader: what the text says
                                    exists (a model, a URL); `<!-- sample: scope; setup CODE -->` does both.
                                    CODE may name a file of scripts/doc-samples/ instead (`setup Books.swift`): DocC
                                    reads a comment's line that opens with `@` as a directive.
  <!-- sample: compile-only REASON -->  compiled, not run; REASON says why (a server it needs, a loop that waits for
                                    as long as the app runs). A scoped one is skipped; any other ends the run, since
                                    later samples may use its names. `<!-- sample: scope; compile-only REASON; setup
                                    CODE -->` combines them, in this order.
  <!-- sample: skip REASON -->      not compiled; REASON says why (a manifest fragment, code shown as refused)
And just after a sample:
  <!-- check: CODE -->              CODE runs after the sample, unseen: what the text says of its outcome, as
                                    `precondition`s.
`import` lines move to the top of the program. Usage: scripts/doc-samples.py [--run]
"""
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md"] + sorted(ROOT.glob("Sources/*/*.docc/*.md"))
SAMPLE = re.compile(
    r"(?:<!-- sample: (?P<directive>(?:(?!-->).)*?)\s*-->[ \t]*\n)?```swift\n(?P<code>.*?)```"
    r"(?:[ \t]*\n<!-- check: (?P<check>(?:(?!-->).)*?)\s*-->)?",
    re.S,
)
# `print(VALUE)   // TEXT`: the text says what the line prints.
PRINTS = re.compile(r"^(?P<indent>\s*)print\((?P<value>.*)\)\s*// (?P<text>.+?)\s*$")
# Defined once per program: checks a printed line against the document's word for it.
EXPECT_PRINTED = """
/// Prints `value` as `print` does, and stops the program when the document says it prints something else.
func docSampleExpectPrinted(_ value: Any, _ text: String, at place: String) {
    let printed = String(describing: value)
    print(printed)
    precondition(printed == text, "\\(place): printed \\(printed), the document says \\(text)")
}
"""
# Compile-only samples: a scoped one is a block never entered, any other is preceded by the run's end. A program's
# arguments hold at least its path; the conditions are not constants, so the compiler does not warn of code that
# never runs.
SKIPPED_SCOPE = "if CommandLine.arguments.isEmpty {\n"
RUN_ENDS = "if !CommandLine.arguments.isEmpty { exit(0) }   // compile-only from here on\n"


def program(document: pathlib.Path) -> tuple[str, int, list[str]]:
    """The document's program, how many samples it compiles, and the skipped ones' reasons."""
    imports = {"import Foundation", "import ObjectGraph", "import PredicateFormat"}
    body: list[str] = []
    count = 0
    skipped: list[str] = []
    for match in SAMPLE.finditer(document.read_text()):
        directive = (match.group("directive") or "").strip()
        line = document.read_text()[: match.start("code")].count("\n") + 1
        if directive.startswith("skip"):
            skipped.append(f"{document.relative_to(ROOT)}:{line}: {directive[4:].strip()}")
            continue
        scoped, setup, compile_only = False, "", False
        if directive.startswith("scope"):
            scoped, directive = True, directive[len("scope"):].lstrip("; \n")
        if directive.startswith("compile-only"):
            reason, _, rest = directive[len("compile-only"):].partition(";")
            if not reason.strip():
                sys.exit(f"{document.relative_to(ROOT)}:{line}: compile-only needs a reason")
            compile_only, directive = True, rest.lstrip("; \n")
        if directive.startswith("setup"):
            setup, directive = directive[len("setup"):].strip(), ""
            # A file of scripts/doc-samples/ for code DocC would misread inside a comment (a line opening with `@`).
            if re.fullmatch(r"[\w-]+\.swift", setup):
                setup = (ROOT / "scripts" / "doc-samples" / setup).read_text()
        if directive:
            sys.exit(f"{document.relative_to(ROOT)}:{line}: unknown sample directive '{directive}'")
        lines = []
        for offset, text in enumerate(match.group("code").splitlines()):
            prints = PRINTS.match(text)
            if text.startswith("import "):
                imports.add(text.strip())
            elif prints:
                place = f"{document.relative_to(ROOT)}:{line + offset}"
                lines.append(f'{prints["indent"]}docSampleExpectPrinted({prints["value"]}, #"{prints["text"]}"#, at: "{place}")')
            else:
                lines.append(text)
        code = "\n".join(lines)
        check = f"{match.group('check')}\n" if match.group("check") else ""
        block = f"// {document.relative_to(ROOT)}:{line}\n" + (f"{setup}\n" if setup else "") + f"{code}\n{check}"
        if compile_only and scoped:
            body.append(SKIPPED_SCOPE + block + "}\n")
        elif compile_only:
            body.append(RUN_ENDS + block)
        else:
            body.append("do {\n" + block + "}\n" if scoped else block)
        count += 1
    header = "// Generated by scripts/doc-samples.py from the document's samples: edit the document, not this file.\n"
    helpers = EXPECT_PRINTED if any("docSampleExpectPrinted(" in block for block in body) else ""
    return header + "\n".join(sorted(imports)) + "\n" + helpers + "\n" + "\n".join(body), count, skipped


def run() -> None:
    """Runs every program the last generation wrote, each in a fresh directory; exits nonzero on the first failure.

    The programs are looked for where the build with OBJECTGRAPH_SWIFT_OPTIONS (scripts/test.sh's) put them."""
    options = shlex.split(os.environ.get("OBJECTGRAPH_SWIFT_OPTIONS", ""))
    binaries = pathlib.Path(subprocess.run(["swift", "build", *options, "--show-bin-path"], cwd=ROOT, check=True,
                                           capture_output=True, text=True).stdout.strip())
    for folder in sorted(ROOT.glob("Sources/DocSamples*")):
        if not (folder / "main.swift").exists():
            continue
        if not (binaries / folder.name).exists():
            sys.exit(f"{folder.name}: not built; run `swift build` after generating the programs")
        with tempfile.TemporaryDirectory(prefix=folder.name + "-") as directory:
            environment = dict(os.environ, TMPDIR=directory + "/", SWIFT_BACKTRACE="enable=no")
            try:
                outcome = subprocess.run([binaries / folder.name], cwd=directory, env=environment, capture_output=True,
                                         text=True, timeout=120)
            except subprocess.TimeoutExpired:
                sys.exit(f"{folder.name}: still running after two minutes (a sample that waits forever needs "
                         "`compile-only`)")
        if outcome.returncode != 0:
            sys.exit(f"{folder.name} failed (exit {outcome.returncode}):\n{outcome.stdout}{outcome.stderr}")
        print(f"{folder.name}: ran")


def main() -> None:
    if sys.argv[1:] == ["--run"]:
        return run()
    total, skipped_all = 0, []
    for stale in ROOT.glob("Sources/DocSamples*/main.swift"):
        stale.unlink()
    for document in DOCUMENTS:
        text, count, skipped = program(document)
        skipped_all += skipped
        if count == 0:
            continue
        name = "DocSamples" + re.sub(r"[^A-Za-z0-9]", "", document.stem.title() if document.stem.isupper() else document.stem)
        folder = ROOT / "Sources" / name
        folder.mkdir(exist_ok=True)
        (folder / "main.swift").write_text(text)
        total += count
    print(f"{total} samples compiled as code; {len(skipped_all)} skipped:")
    for reason in skipped_all:
        print(f"  {reason}")


if __name__ == "__main__":
    main()
