"""robots.txt: which URLs a crawler may fetch, its sitemaps and crawl delay (RFC 9309)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.robotparser import RobotFileParser

__all__ = ["USER_AGENT", "RobotRules", "robots_from_status"]

# The product token robots.txt groups are matched against.
USER_AGENT = "citewise"


@dataclass(frozen=True)
class RobotRules:
    """The rules of one host's robots.txt (``parser`` None: everything allowed)."""

    parser: RobotFileParser | None = None
    sitemaps: tuple[str, ...] = ()
    closed: str = ""  # why the whole site is closed (robots.txt unreachable), else ""
    crawl_delay: float = 0.0
    notes: list[str] = field(default_factory=list)

    def allows(self, url: str) -> bool:
        if self.closed:
            return False
        return self.parser is None or self.parser.can_fetch(USER_AGENT, url)

    @classmethod
    def parse(cls, text: str) -> RobotRules:
        parser = RobotFileParser()
        parser.parse(text.splitlines())
        delay = parser.crawl_delay(USER_AGENT)
        return cls(parser, tuple(parser.site_maps() or ()), crawl_delay=float(delay or 0))


def robots_from_status(status: int, text: str, url: str) -> RobotRules:
    """The rules a robots.txt response gives: its content when 200; everything allowed when
    it is missing (4xx); the site closed when the server fails (5xx), as RFC 9309 says."""
    if status == 200:
        return RobotRules.parse(text)
    if 400 <= status < 500:
        return RobotRules()
    return RobotRules(closed=f"{url} answered HTTP {status}, so the site is treated as closed "
                      "to crawlers (RFC 9309); try again later")  # fmt: skip
