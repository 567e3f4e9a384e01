"""The instrumentation seam: blocks time themselves, inherit labels, and reach only the
observers listening in their context; real ingests, searches and answers report their stages."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from citewise import telemetry
from citewise.errors import ModelError
from citewise.telemetry import OPERATION, RECORD, STAGE, Event
from citewise.testing import ScriptedChatModel, script
from tests.kb_support import MakeKB, sections, upload

INSTALL = sections("Install", "Run pip install example to install the package.")
CONFIG = sections("Configure", "Set EXAMPLE_KEY in the environment.", "Logs go to stderr.")


@dataclass
class Recorder:
    """An observer that keeps what it is told."""

    events: list[Event] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, event: Event) -> None:
        with self.lock:
            self.events.append(event)

    def named(self, name: str, kind: str | None = None) -> list[Event]:
        return [e for e in self.events if e.name == name and kind in (None, e.kind)]


def test_nobody_listening_costs_nothing_and_reports_nothing() -> None:
    """Blocks outside any listener's context reach no observer, even one listening at the
    same moment in another thread, and leave no span behind as the current one."""
    recorder = Recorder()
    listening_now, done = threading.Event(), threading.Event()

    def listen_elsewhere() -> None:
        with telemetry.listening(recorder):
            listening_now.set()
            done.wait(10)

    thread = threading.Thread(target=listen_elsewhere)
    thread.start()
    assert listening_now.wait(10)
    try:
        with telemetry.operation("search", "a secret query", kb="docs") as op:
            with telemetry.stage("dense") as stage:
                assert stage.name == "dense" and stage.parent is None  # not made current
            op.set(hits=1)
        telemetry.record("model_call", purpose="plan")  # no observer: returns at once
    finally:
        done.set()
        thread.join()
    assert recorder.events == []
    with telemetry.listening(recorder):
        with telemetry.stage("keyword") as stage:
            assert stage.parent is None  # the earlier operation did not stay current
    assert [e.name for e in recorder.events] == ["keyword"]


def test_stages_inherit_labels_and_sum_into_their_operation() -> None:
    recorder = Recorder()
    with telemetry.listening(recorder):
        with telemetry.operation("search", "the query", kb="docs") as op:
            for _ in range(2):
                with telemetry.stage("dense"):
                    pass
            with telemetry.stage("keyword"):
                pass
            op.set(hits=3, top_k=5)
    dense = recorder.named("dense")
    assert [e.kind for e in dense] == [STAGE, STAGE]
    assert dense[0].labels == {"kb": "docs"} and dense[0].within == "search"
    (search,) = recorder.named("search")
    assert search.kind == OPERATION and search.outcome == "ok"
    assert set(search.stages) == {"dense", "keyword"}
    assert search.stages["dense"] == pytest.approx(sum(e.seconds for e in dense))
    assert search.values == {"hits": 3, "top_k": 5} and search.subject == "the query"


def test_a_failure_is_reported_with_its_cause_and_raised() -> None:
    recorder = Recorder()
    with telemetry.listening(recorder), pytest.raises(ModelError):
        with telemetry.operation("answer", kb="docs"), telemetry.stage("generate"):
            raise ModelError("the chat model failed: 503")
    generate, answer = recorder.events
    assert (generate.name, answer.name) == ("generate", "answer")
    assert answer.outcome == "error" and answer.error == "ModelError"
    assert answer.cause == "ModelError: the chat model failed: 503"


def test_observers_hear_only_their_own_context() -> None:
    mine, other = Recorder(), Recorder()

    async def work(name: str) -> None:
        with telemetry.operation(name):
            await asyncio.sleep(0)

    async def both() -> None:
        async def listened(recorder: Recorder, name: str) -> None:
            with telemetry.listening(recorder):
                await asyncio.gather(work(name), asyncio.to_thread(lambda: None))

        await asyncio.gather(listened(mine, "a"), listened(other, "b"))

    asyncio.run(both())
    assert [e.name for e in mine.events] == ["a"]
    assert [e.name for e in other.events] == ["b"]
    with telemetry.operation("nobody"):
        pass
    assert len(mine.events) == 1


def test_a_process_observer_hears_everything_until_it_stops() -> None:
    recorder = Recorder()
    stop = telemetry.observe(recorder)
    try:
        thread = threading.Thread(target=lambda: telemetry.record("model_call", purpose="x"))
        thread.start()
        thread.join()
        with telemetry.listening(recorder):  # listening again does not hear twice
            telemetry.record("model_call", purpose="y")
    finally:
        stop()
    telemetry.record("model_call", purpose="z")
    assert [e.labels["purpose"] for e in recorder.events] == ["x", "y"]
    assert recorder.events[0].kind == RECORD


def test_a_broken_observer_never_fails_the_work(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def observe(self, event: Event) -> None:
            raise RuntimeError("observer bug")

    recorder = Recorder()
    with telemetry.listening(Broken(), recorder), telemetry.operation("search"):
        pass
    assert [e.name for e in recorder.events] == ["search"]
    assert "telemetry observer" in caplog.text


@dataclass
class TracingRecorder(Recorder):
    """A recorder that also wraps each block, noting when its span opens and closes (and
    what it closed on); ``refuse`` makes opening the span of that name fail."""

    log: list[tuple[str, str, str]] = field(default_factory=list)
    refuse: str = ""

    def observe(self, event: Event) -> None:
        self.log.append(("event", event.name, event.error or ""))
        super().observe(event)

    @contextmanager
    def span(self, name: str, labels: Mapping[str, str]) -> Iterator[None]:
        if name == self.refuse:
            raise RuntimeError("no span today")
        self.log.append(("open", name, ",".join(f"{k}={v}" for k, v in labels.items())))
        try:
            yield
        except BaseException as error:
            self.log.append(("close", name, type(error).__name__))
            raise
        self.log.append(("close", name, ""))


def test_a_tracing_observer_wraps_each_block_and_sees_its_error() -> None:
    recorder = TracingRecorder()
    with telemetry.listening(recorder), pytest.raises(ModelError):
        with telemetry.operation("answer", kb="docs"), telemetry.stage("generate") as stage:
            assert stage.parent is not None and stage.parent.name == "answer"
            raise ModelError("503")
    assert recorder.log == [
        ("open", "answer", "kb=docs"),
        ("open", "generate", "kb=docs"),
        ("close", "generate", "ModelError"),
        ("event", "generate", "ModelError"),
        ("close", "answer", "ModelError"),
        ("event", "answer", "ModelError"),
    ]
    (answer,) = recorder.named("answer")
    assert set(answer.stages) == {"generate"}


def test_a_span_that_cannot_open_ends_its_block_and_raises() -> None:
    recorder = TracingRecorder(refuse="dense")
    with telemetry.listening(recorder):
        with telemetry.operation("search") as op:
            with pytest.raises(RuntimeError, match="no span today"):
                with telemetry.stage("dense"):
                    raise AssertionError("the body of a block whose span failed ran")
            with telemetry.stage("keyword") as keyword:
                assert keyword.parent is op  # the failed block is not current any more
    assert [(kind, name) for kind, name, _ in recorder.log] == [
        ("open", "search"),
        ("event", "dense"),
        ("open", "keyword"),
        ("close", "keyword"),
        ("event", "keyword"),
        ("close", "search"),
        ("event", "search"),
    ]
    (search,) = recorder.named("search")
    assert set(search.stages) == {"dense", "keyword"}


def test_ingest_search_delete_report_their_stages(make_kb: MakeKB) -> None:
    kb = make_kb()
    recorder = Recorder()
    with telemetry.listening(recorder):
        kb.add_documents([upload("install.md", INSTALL), upload("config.md", CONFIG)])
        kb.search("How do I install it?", top_k=2)
        kb.search("zzzz qqqq", top_k=2, search_type="full_text")
        kb.delete_document("install.md")
    (ingest,) = recorder.named("ingest", OPERATION)
    assert {"parse", "chunk", "embed", "store"} <= set(ingest.stages)
    assert ingest.labels == {"kb": "files"} and ingest.values["files"] == 2
    found, empty = recorder.named("search", OPERATION)
    assert {"embed_query", "dense", "keyword", "fuse"} <= set(found.stages)
    assert (
        found.values == {"hits": 2, "top_k": 2, "filtered": 0.0}
        and found.subject == "How do I install it?"
    )
    assert empty.values["hits"] == 0 and set(empty.stages) == {"keyword"}
    (delete,) = recorder.named("delete", OPERATION)
    assert delete.subject == "install.md" and delete.values["chunks"] >= 1


def test_an_answer_reports_plan_searches_generation_first_token_and_model_calls(
    make_kb: MakeKB,
) -> None:
    kb = make_kb(model=ScriptedChatModel(reply=script(answer="Run pip install example.")))
    kb.add_documents([upload("install.md", INSTALL)])
    recorder = Recorder()
    with telemetry.listening(recorder):
        answer = kb.ask("How do I install it?")
    (event,) = recorder.named("answer", OPERATION)
    assert event.outcome == "ok"
    assert event.labels == {"kb": "files", "model": "citewise-rag", "kind": "generated"}
    assert {"plan", "search", "generate"} <= set(event.stages)
    assert 0 < event.values["first_token"] <= event.seconds
    assert event.values["citations"] == len(answer.citations)
    (search,) = recorder.named("search", OPERATION)
    assert search.within == "answer"
    # The scripted model's structured replies (the plan) are plain functions, not model calls.
    calls = recorder.named("model_call", RECORD)
    assert [c.labels["purpose"] for c in calls] == ["answer"]
    assert all(c.outcome == "ok" and c.labels["kb"] == "files" for c in calls)
