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
        "Your previous answer used names or links that the documentation sections do not contain."
    ]
    if verification.unsupported:
        names = ", ".join(token.strip("`") for token in verification.unsupported)
        lines.append(f"Not found in the sections: {names}.")
    if verification.outside_links:
        lines.append(f"Links to no retrieved section: {', '.join(verification.outside_links)}.")
    lines.append(
        "Answer again using only names, commands, settings and URLs that appear in the "
        "sections; if the sections do not say, say so instead of guessing."
    )
    return " ".join(lines)
