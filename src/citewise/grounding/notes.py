"""What the check says to people and to the model: the ``warn`` note and the regeneration's
instruction, each naming what the sections do not hold."""

from __future__ import annotations

from citewise.models import Verification


def warning(verification: Verification) -> str:
    """The visible note ``verify=warn`` appends to an answer that failed the check ("" if
    it passed)."""
    problems = []
    if verification.unsupported:
        names = ", ".join(f"`{token.strip('`')}`" for token in verification.unsupported[:8])
        problems.append(f"names not found in the documentation sections: {names}")
    if verification.outside_links:
        problems.append(
            f"links outside the retrieved sections: {', '.join(verification.outside_links[:5])}"
        )
    if verification.problems:
        problems += [f"{_quoted(p.text)}: {p.detail}" for p in verification.problems[:5]]
    if verification.unsupported_blocks:
        claims = "; ".join(f"“{block}”" for block in verification.unsupported_blocks[:3])
        problems.append(f"claims no retrieved section supports: {claims}")
    weak = [c.url for c in verification.citations if not c.supported]
    if weak:
        problems.append(
            f"citations the cited section does not clearly support: {', '.join(weak[:5])}"
        )
    if not problems:
        return ""
    return "\n\n> **Check this answer:** " + "; ".join(problems) + "."


def regenerate_instruction(verification: Verification) -> str:
    """What the one regeneration is told: the problems of the first answer, by name."""
    lines = [
        "Your previous answer used names, links or claims that the documentation sections do "
        "not support."
    ]
    if verification.unsupported:
        names = ", ".join(token.strip("`") for token in verification.unsupported)
        lines.append(f"Not found in the sections: {names}.")
    if verification.outside_links:
        lines.append(f"Links to no retrieved section: {', '.join(verification.outside_links)}.")
    for problem in verification.problems:
        lines.append(f"{_quoted(problem.text)}: {problem.detail}.")
    lines.append(
        "Answer again using only names, commands, settings and URLs that appear in the "
        "sections; if the sections do not say, say so instead of guessing."
    )
    return " ".join(lines)


def _quoted(text: str) -> str:
    flat = " ".join(text.split()).strip("`")
    return f"`{flat}`" if len(flat) <= 80 else f"“{flat[:79]}…”"
