"""An NLI cross-encoder served over HTTP (`[nli_servers.NAME]`), on text-embeddings-inference's contract.

The contract (text-embeddings-inference serves it for any sequence-classification model; a
server of one's own needs only these two routes):

- `GET URL/info` (optional): `{"model_id": ..., "model_sha": ..., "max_input_length": N,
  "model_type": {"classifier": {"id2label": {"0": "entailment", ...}}}}`;
- `POST URL/predict` with `{"inputs": [[premise, hypothesis], ...], "truncate": true,
  "raw_scores": false}` → one list per pair of `{"label": NAME, "score": P}` (probabilities,
  in any order).

Each answer is read by label NAME, never by position: names are mapped onto entailment /
neutral / contradiction as a local model's `config.id2label` is (`qatui.nli.labels`, which
refuses unnamed "LABEL_0" or unknown names), and must be the labels `/info` declares. Names
can still lie (a model whose config names its outputs in the wrong order), and a swapped
entailment / contradiction would invert every NLI judgement without a sign. So before a run,
the preflight scores an obvious entailment and an obvious contradiction (`PROBE_PAIRS`) and
refuses a server that reads them the other way round.

What `/info` says (model id and sha, labels, the window) is part of the identity its stored outputs are
kept under, and is kept with them (`probed`, in the model-output store). A later run that finds it there
builds the scorer from it without a request (`known`), and the `/info` request and the label check are put
off (`put_off`) until the first pair the store cannot answer: then made once, before any pair is sent
(`verify`), and a server that is down, reports another model than the kept one, or reads the labels the
wrong way stops the run there. A server the store knows nothing of is checked when it is built, as above.

Scores that are not probabilities (summing to 1) are refused, not renormalised. A premise longer
than the server reads is split into windows counted in characters (a character is at most one
token for the common tokenizers), and the pair scores as its best window, as a local
cross-encoder's does (`qatui.nli.windows`). Transient failures (connection, timeout, 429, 500,
502, 503, 504) are retried with jittered backoff (a `Retry-After` waited out); everything else
raises `NLIError` with the reason, which fails the items that needed the scores.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from qatui.nli.base import NLIError, NLIProbs, NLIScorer, check_pairs
from qatui.nli.labels import PROBE_PAIRS, LabelMap, check_reading, label_map
from qatui.nli.windows import char_slices, premise_windows
from qatui.store.credentials import key_from_env
from qatui.store.model_outputs import Probed, PutOffCheck

if TYPE_CHECKING:
    from qatui.config import NLIServerConfig

DEFAULT_WINDOW_CHARS = 480
"""Characters of a pair sent together when neither the config nor `/info` says more (under 512 tokens in any script)."""
RETRIED = frozenset({429, 500, 502, 503, 504})
BASE_DELAY_S = 0.5
MAX_DELAY_S = 30.0


Learned = tuple[str, str, tuple[str, ...] | None, int]
"""What `/info` gives the identity: model id, model sha, the declared labels (None: none declared), the window."""


class ServedNLI(NLIScorer):
    """P(entail / neutral / contradict) from a server; built after `/info` and the probe pairs check out, or from
    what they showed before (`known`, the facts of `probed`) with that check put off (`put_off` makes the
    `PutOffCheck` of `verify`)."""

    def __init__(self, name: str, settings: NLIServerConfig, *, sleep: Callable[[float], Any] = time.sleep,
                 known: dict[str, Any] | None = None,
                 put_off: Callable[[Callable[[], str]], PutOffCheck] | None = None) -> None:
        self.name = name
        self.settings = settings
        self.url = settings.url.rstrip("/")
        self.sleep = sleep
        self.requests = 0
        """HTTP requests sent (tries included)."""
        self._count_lock = threading.Lock()
        self._maps: dict[tuple[str, ...], LabelMap] = {}
        self._seen: tuple[str, ...] = ()
        self._client = httpx.Client(timeout=settings.timeout_s)
        self.check: PutOffCheck | None = None
        """The put-off `verify`; None once built checked."""
        remembered = _from_facts(known) if known is not None and put_off is not None else None
        if remembered is not None and put_off is not None:
            self.model_id, self.model_sha, self.declared, self.window_chars = remembered
            self.check = put_off(self.verify)
            return
        self.model_id, self.model_sha, self.declared, self.window_chars = self._learn(self._info())
        self._check_probe()

    def probed(self) -> Probed:
        """What `/info` showed (the identity's parts), kept with the outputs; found by the URL, `revision` and
        `window_chars` (the settings the identity also holds)."""
        return Probed(probed_key(self.settings), {"model_id": self.model_id, "model_sha": self.model_sha,
                                                  "labels": list(self.declared) if self.declared else None,
                                                  "window_chars": self.window_chars})

    def verify(self) -> str:
        """The put-off check: `/info` and the probe pairs, as when built checked; what it showed, or `NLIError` when
        the server is down, reads the labels the wrong way, or reports another model than the kept one."""
        now = self._learn(self._info())
        kept = (self.model_id, self.model_sha, self.declared, self.window_chars)
        if now != kept:
            raise NLIError(f"NLI server {self.name!r} ({self.url}) now reports {_described(now)}, but its outputs in "
                           f"the model-output store came from {_described(kept)}: a run would mix two models' "
                           f"outputs. Give [nli_servers.{self.name}] a new revision to score afresh")
        self._check_probe()
        return f"NLI server {self.name!r}: {_described(now)}; an obvious entailment and contradiction read right"

    def _learn(self, info: dict[str, Any]) -> Learned:
        """What `/info` gives the identity (the window: the setting, else its `max_input_length`, else the default)."""
        limit = info.get("max_input_length")
        window = self.settings.window_chars or (limit if isinstance(limit, int) and limit >= 64 else
                                                DEFAULT_WINDOW_CHARS)
        return (str(info.get("model_id") or ""), str(info.get("model_sha") or ""), self._declared_labels(info),
                window)

    def _checked(self) -> None:
        """From synchronous code: make the put-off check first when it has not passed (raises when it fails)."""
        if self.check is not None and not self.check.passed:
            asyncio.run(self.check.before_call())

    async def apredict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """`predict` in a worker thread, the put-off check made first in this task's context (a failing one stops
        the run from here, before any pair is sent)."""
        if self.check is not None:
            await self.check.before_call()
        return await asyncio.to_thread(self.predict, list(pairs))

    def identity(self) -> str:
        """The server, the model it says it serves, its labels, `revision` and the window: keys the stored outputs."""
        parts = ["served nli", self.url, self.model_id, self.model_sha, self.settings.revision, str(self.window_chars),
                 ",".join(sorted(self.declared or ()))]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]

    # -- scoring ------------------------------------------------------------------------------

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """One `NLIProbs` per pair; a long premise is sent as windows and scores as its best one."""
        pairs = check_pairs(pairs)
        self._checked()
        windows = [premise_windows(p, h, self.window_chars, len, char_slices) for p, h in pairs]
        flat = [(w, h) for ws, (_, h) in zip(windows, pairs, strict=True) for w in ws]
        scored: list[NLIProbs] = []
        for start in range(0, len(flat), self.settings.batch_size):
            scored += self._scores(flat[start:start + self.settings.batch_size])
        out, at = [], 0
        for ws in windows:
            out.append(max(scored[at:at + len(ws)], key=lambda p: p.entail - p.contradict))
            at += len(ws)
        return out

    def _scores(self, pairs: list[tuple[str, str]]) -> list[NLIProbs]:
        """One `/predict` request: each pair's label scores read by name."""
        body = self._request("POST", "/predict", {"inputs": [list(p) for p in pairs], "truncate": True,
                                                  "raw_scores": False})
        if not isinstance(body, list) or len(body) != len(pairs):
            got = len(body) if isinstance(body, list) else type(body).__name__
            raise NLIError(f"NLI server {self.name!r}: /predict answered {got} rows for {len(pairs)} pairs")
        return [self._read_row(row) for row in body]

    def _read_row(self, row: object) -> NLIProbs:
        """`[{"label": NAME, "score": P}, ...]` → NLIProbs, by name; refused when names or numbers are off."""
        if not isinstance(row, list) or not all(isinstance(x, dict) for x in row):
            raise NLIError(f"NLI server {self.name!r}: a /predict row is not a list of {{label, score}}: {str(row)[:120]}")
        names = tuple(str(x.get("label")) for x in row)
        scores = [x.get("score") for x in row]
        if not all(isinstance(s, int | float) and not isinstance(s, bool) and math.isfinite(s) for s in scores):
            raise NLIError(f"NLI server {self.name!r}: a /predict score is not a finite number: {str(row)[:120]}")
        if len(set(names)) != len(names):
            raise NLIError(f"NLI server {self.name!r}: a /predict row names a label twice: {list(names)}")
        if self.declared is not None and set(names) != set(self.declared):
            raise NLIError(f"NLI server {self.name!r}: /predict answered the labels {sorted(names)}, but /info declares "
                           f"{sorted(self.declared)}")
        labels = self._label_map(names)
        self._seen = names
        entail = sum(scores[i] for i in labels.entail)
        neutral = sum(scores[i] for i in labels.neutral)
        contradict = sum(scores[i] for i in labels.contradict)
        try:
            return NLIProbs(entail=entail, neutral=neutral, contradict=contradict)
        except ValueError:
            raise NLIError(f"NLI server {self.name!r}: its scores {dict(zip(names, scores))} are not probabilities "
                           "summing to 1 (text-embeddings-inference: leave raw_scores off)") from None

    def _label_map(self, names: tuple[str, ...]) -> LabelMap:
        """The class of each position of one answer, by its label name (cached per name order)."""
        found = self._maps.get(names)
        if found is None:
            found = self._maps[names] = label_map(dict(enumerate(names)), f"{self.name} ({self.url})")
        return found

    # -- preflight ----------------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        """`/info`, or {} for a server without one."""
        body = self._request("GET", "/info", None, missing_ok=True)
        return body if isinstance(body, dict) else {}

    def _declared_labels(self, info: dict[str, Any]) -> tuple[str, ...] | None:
        """The label names `/info` declares (checked as NLI names now); None when it declares none."""
        kind = info.get("model_type")
        if isinstance(kind, dict) and kind and "classifier" not in kind:
            raise NLIError(f"NLI server {self.name!r} ({self.url}) serves a {', '.join(kind)} model, not a classifier: "
                           "serve a sequence-classification NLI model")
        classifier = kind.get("classifier") if isinstance(kind, dict) else None
        id2label = classifier.get("id2label") if isinstance(classifier, dict) else None
        if not isinstance(id2label, dict) or not id2label:
            return None
        labels = label_map(id2label, f"{self.name} ({self.url})")
        return tuple(name for _, name in labels.id2label)

    def _check_probe(self) -> None:
        """Score `PROBE_PAIRS`; refuse a server whose label names misread them (`labels.check_reading`)."""
        entailed, contradicted = self._scores(list(PROBE_PAIRS))
        check_reading(f"NLI server {self.name!r} ({self.url})", entailed, contradicted,
                      self._label_map(self.declared or self._seen),
                      ", ".join(self.declared) if self.declared else "as its answers name them")

    # -- HTTP ---------------------------------------------------------------------------------

    def _api_key(self) -> str | None:
        return key_from_env(self.settings.api_key_env, f"NLI server {self.name!r}", f"[nli_servers.{self.name}]",
                            NLIError)

    def _request(self, method: str, path: str, body: object, *, missing_ok: bool = False) -> Any:
        """One JSON request, retried when transient; `NLIError` with the reason when it cannot be had."""
        key = self._api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        failures: list[str] = []
        started = time.monotonic()
        for attempt in range(1, self.settings.max_attempts + 1):
            with self._count_lock:
                self.requests += 1
            after: float | None = None
            try:
                response = self._client.request(method, self.url + path, json=body, headers=headers)
            except httpx.TimeoutException:
                failures.append(f"timed out after {self.settings.timeout_s:g} s")
            except httpx.TransportError:
                failures.append("connection failed")
            else:
                status = response.status_code
                if status in RETRIED:
                    failures.append(f"{status}")
                    after = _retry_after(response)
                elif missing_ok and status in (404, 405):
                    return None
                elif status >= 400:
                    raise NLIError(f"NLI server {self.name!r}: {method} {path} answered {status}: "
                                   f"{_error_text(response, key)}")
                else:
                    try:
                        return response.json()
                    except ValueError:
                        raise NLIError(f"NLI server {self.name!r}: {method} {path} answered something that is not "
                                       f"JSON: {response.text[:80]!r}") from None
            if attempt < self.settings.max_attempts:
                delay = min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
                self.sleep(max(delay, min(after, MAX_DELAY_S)) if after is not None else delay)
        counts = {f: failures.count(f) for f in dict.fromkeys(failures)}
        what = ", ".join(f"{f} ×{n}" for f, n in counts.items())
        raise NLIError(f"NLI server {self.name!r} ({self.url}): {method} {path} failed {len(failures)} times ({what}), "
                       f"gave up after {time.monotonic() - started:.1f} s")


def probed_key(settings: NLIServerConfig) -> str:
    """Where what `/info` showed of the server with `settings` is kept (`store.model_outputs.Probed`)."""
    return "\0".join(["served nli", settings.url.rstrip("/"), settings.revision, str(settings.window_chars or "")])


def _from_facts(facts: dict[str, Any]) -> Learned | None:
    """Kept facts back to what `/info` gave; None when they are not of that shape (the server is then asked)."""
    model_id, sha, labels, window = (facts.get(k) for k in ("model_id", "model_sha", "labels", "window_chars"))
    if not (isinstance(model_id, str) and isinstance(sha, str) and isinstance(window, int)
            and not isinstance(window, bool) and window >= 1):
        return None
    if labels is None:
        return model_id, sha, None, window
    if not (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels)):
        return None
    return model_id, sha, tuple(labels), window


def _described(learned: Learned) -> str:
    """What `/info` showed, on one line: the model, its sha, its labels, the window."""
    model_id, sha, labels, window = learned
    return (f"model {model_id or '(unnamed)'}{f' at {sha[:12]}' if sha else ''}, labels "
            f"{', '.join(labels) if labels else '(none declared)'}, a window of {window} characters")


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds a 429 asks to wait (`retry-after-ms` or `Retry-After` in seconds), when finite."""
    try:
        if (value := response.headers.get("retry-after-ms")) is not None:
            seconds = float(value) / 1000
        elif (value := response.headers.get("retry-after")) is not None:
            seconds = float(value)
        else:
            return None
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _error_text(response: httpx.Response, key: str | None) -> str:
    """What an error reply says, on one short line, without the key (a 401's text is left out whole)."""
    if response.status_code in (401, 403):
        return "authentication failed: check the key named by api_key_env"
    try:
        body = response.json()
        text = str(body.get("error") or body) if isinstance(body, dict) else str(body)
    except ValueError:
        text = response.text
    text = " ".join(text.split())[:200]
    return text.replace(key, "***") if key else text
