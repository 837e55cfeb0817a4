"""The files and batches endpoints of the scripted server (tests/llm_server.py), as OpenAI serves them.

    POST /v1/files                 upload a JSONL file (multipart: `file`, `purpose`)
    GET  /v1/files/{id}            its description;  GET /v1/files/{id}/content: its bytes
    POST /v1/batches               a batch over an uploaded file; GET /v1/batches/{id}: its state
    POST /v1/batches/{id}/cancel   cancel a batch not yet ended (400 for one that has)

A batch is "validating" when created, "in_progress" after `delay_s`, then each request line is
answered as a completion request would be (the server's responder, its `usage`), unless the
batch script says otherwise: `faults(index, body)` (index counts batch requests from 0 since
`script_batches`) gives "ok", "length" (an answer cut off at max_tokens) or an HTTP status such as
"500" or "429" (that line fails, in the error file); a batch whose number (from 0) is in `expire`
answers its first half and then expires, the rest in the error file with code `batch_expired`, as
OpenAI's does when 24 hours pass. A batch cancelled before it ended is "cancelling", then "cancelled"
once it has answered the first half of its lines (as if those ran before the cancel took effect; the
rest get no line), at once even when held. `duplicates(index, body)` may name one more line for an answered request,
as a provider's files sometimes do: "same" (its answer again), "other" (a second, different answer) or "error" (a
failure line for it in the error file); `None` for none. `reshape(index, completion)` returns the body an answered line
carries instead of its completion (a provider's malformed line: `choices: [null]`, a `usage` that is a string).
`batch_requests` maps each custom id to the body that
carried it, `batch_answered` the custom ids a batch answered with a line, `n_cancels` the cancels.
Counted: `n_files`, `n_batches`, `n_batch_polls`, and
`batch_submitted` (custom id -> how many batches carried it), so a test can say nothing was
submitted twice. `batch_bodies` holds every request body a batch carried, in order.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchEndpoints:
    """Mixed into `FakeLLMServer`: its files, its batches and their script."""

    def _init_batches(self) -> None:
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.n_files = 0
        self.n_batches = 0
        self.n_batch_polls = 0
        self.batch_submitted: Counter[str] = Counter()
        self.batch_bodies: list[dict[str, Any]] = []
        self.batch_requests: dict[str, dict[str, Any]] = {}
        self.batch_answered: Counter[str] = Counter()
        self.n_cancels = 0
        self._held = threading.Event()
        self.script_batches()

    def release_batches(self) -> None:
        """Let the batches held by `script_batches(hold=True)` be worked."""
        self._held.clear()

    def script_batches(self, *, delay_s: float | Callable[[int], float] = 0.0,
                       faults: Callable[[int, dict[str, Any]], str] | None = None,
                       expire: Iterable[int] = (), hold: bool = False, only: Iterable[int] | None = None,
                       duplicates: Callable[[int, dict[str, Any]], str | None] | None = None,
                       reshape: Callable[[int, dict[str, Any]], Any] | None = None) -> None:
        """What the next batches do: `delay_s` before a batch is worked (or a function of its number), `faults`
        and `duplicates` per request (in the batches numbered in `only`, by default every one), and which batch numbers (from 0,
        counted over the server's life) expire half-done; `duplicates` a second line for some answered requests; `reshape`
        the body an answered line carries instead of its completion. With
        `hold`, every batch stays "validating" until `release_batches()` (a test kills its client meanwhile)."""
        if hold:
            self._held.set()
        with self._lock:
            self._batch_delay = delay_s
            self._batch_faults = faults
            self._batch_expire = frozenset(expire)
            self._batch_only = None if only is None else frozenset(only)
            self._batch_duplicates = duplicates
            self._batch_reshape = reshape
            self._batch_index = 0

    def _add_batch_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_get("/v1/files/{id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches/{id}", self._batch)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)

    # -- files ----------------------------------------------------------------------------------

    def _file_object(self, file_id: str, purpose: str = "batch") -> dict[str, Any]:
        return {"id": file_id, "object": "file", "bytes": len(self.files[file_id]), "created_at": int(time.time()),
                "filename": f"{file_id}.jsonl", "purpose": purpose, "status": "processed"}

    def _store_file(self, data: bytes) -> str:
        with self._lock:
            self.n_files += 1
            file_id = f"file-fake-{self.n_files}"
            self.files[file_id] = data
        return file_id

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        data = upload.file.read() if hasattr(upload, "file") else str(upload or "").encode()
        file_id = self._store_file(data)
        return web.json_response(self._file_object(file_id, str(form.get("purpose") or "batch")))

    async def _file(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return web.json_response({"error": {"message": f"no file {file_id}", "type": "not_found"}}, status=404)
        return web.json_response(self._file_object(file_id))

    async def _file_content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return web.json_response({"error": {"message": f"no file {file_id}", "type": "not_found"}}, status=404)
        return web.Response(body=self.files[file_id], content_type="application/octet-stream")

    # -- batches --------------------------------------------------------------------------------

    async def _create_batch(self, request: web.Request) -> web.Response:
        body = await request.json()
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return web.json_response({"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}},
                                     status=400)
        lines = [json.loads(line) for line in self.files[file_id].decode().splitlines() if line.strip()]
        with self._lock:
            number = self.n_batches
            self.n_batches += 1
            batch_id = f"batch_fake_{number}"
            self.batch_submitted.update(line["custom_id"] for line in lines)
            self.batch_bodies.extend(line["body"] for line in lines)
            self.batch_requests.update((line["custom_id"], line["body"]) for line in lines)
            delay = self._batch_delay(number) if callable(self._batch_delay) else self._batch_delay
            batch = {"id": batch_id, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
                     "input_file_id": file_id, "completion_window": body.get("completion_window", "24h"),
                     "status": "validating", "output_file_id": None, "error_file_id": None,
                     "created_at": int(time.time()), "in_progress_at": None, "expires_at": None,
                     "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
                     "cancelling_at": None, "cancelled_at": None,
                     "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                     "metadata": body.get("metadata")}
            self.batches[batch_id] = batch
        faulty = self._batch_only is None or number in self._batch_only
        asyncio.get_running_loop().create_task(self._work(batch, lines, delay, number in self._batch_expire, faulty))
        return web.json_response(batch)

    async def _batch(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["id"]
        with self._lock:
            self.n_batch_polls += 1
            batch = self.batches.get(batch_id)
        if batch is None:
            return web.json_response({"error": {"message": f"no batch {batch_id}", "type": "not_found"}}, status=404)
        return web.json_response(batch)

    async def _cancel(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["id"]
        with self._lock:
            self.n_cancels += 1
            batch = self.batches.get(batch_id)
            if batch is None:
                return web.json_response({"error": {"message": f"no batch {batch_id}", "type": "not_found"}},
                                         status=404)
            if batch["status"] in TERMINAL:
                return web.json_response({"error": {"message": f"Cannot cancel a batch with status {batch['status']}.",
                                                    "type": "invalid_request_error"}}, status=400)
            batch.update(status="cancelling", cancelling_at=int(time.time()))
        return web.json_response(batch)

    async def _work(self, batch: dict[str, Any], lines: list[dict[str, Any]], delay: float, expire: bool,
                    faulty: bool = True) -> None:
        """Answer a batch's requests after its delay; an expiring or cancelled one answers the first half only."""
        while self._held.is_set() and not self._stopping.is_set() and batch["status"] != "cancelling":
            await asyncio.sleep(0.02)
        if batch["status"] != "cancelling":
            await self._pause(delay)
        cancelled = batch["status"] == "cancelling"
        if not cancelled:
            batch.update(status="in_progress", in_progress_at=int(time.time()))
        answered = lines[: len(lines) // 2] if expire or cancelled else lines
        output, errors = [], []
        for line in answered:
            with self._lock:
                index = self._batch_index
                self._batch_index += 1
            kind = self._batch_faults(index, line["body"]) if self._batch_faults is not None and faulty else "ok"
            self.counts[f"batch-{kind}"] += 1
            if kind.isdigit():
                errors.append({"id": f"req-{index}", "custom_id": line["custom_id"], "error": None, "response": {
                    "status_code": int(kind), "request_id": f"req-{index}",
                    "body": {"error": {"message": f"fake batch request failed ({kind})", "type": "server_error"}}}})
                batch["request_counts"]["failed"] += 1
                continue
            reply = await self._reply(line["body"], _OK)
            completion = self._completion(line["body"], kind, reply, self._usage(line["body"], reply),
                                          f"chatcmpl-batch-{index}")
            if self._batch_reshape is not None and faulty:
                completion = self._batch_reshape(index, completion)
            self.batch_answered[line["custom_id"]] += 1
            output.append({"id": f"req-{index}", "custom_id": line["custom_id"], "error": None,
                           "response": {"status_code": 200, "request_id": f"req-{index}", "body": completion}})
            batch["request_counts"]["completed"] += 1
            extra = self._batch_duplicates(index, line["body"]) if self._batch_duplicates is not None and faulty else None
            if extra is not None:
                self.counts[f"batch-duplicate-{extra}"] += 1
            if extra == "same":
                output.append(output[-1])
            elif extra == "other":
                other = json.loads(json.dumps(completion))
                other["choices"][0]["message"]["content"] = (other["choices"][0]["message"]["content"] or "") + " "
                output.append({**output[-1], "response": {**output[-1]["response"], "body": other}})
            elif extra == "error":
                errors.append({"id": f"req-{index}", "custom_id": line["custom_id"], "error": None, "response": {
                    "status_code": 500, "request_id": f"req-{index}",
                    "body": {"error": {"message": "fake duplicate failure line", "type": "server_error"}}}})
        for line in lines[len(answered):] if not cancelled else ():
            errors.append({"id": None, "custom_id": line["custom_id"], "response": None, "error": {
                "code": "batch_expired", "message": "This request could not be executed before the completion "
                                                    "window expired."}})
        if output:
            batch["output_file_id"] = self._store_file("".join(json.dumps(o) + "\n" for o in output).encode())
        if errors:
            batch["error_file_id"] = self._store_file("".join(json.dumps(e) + "\n" for e in errors).encode())
        now = int(time.time())
        if cancelled:
            batch.update(status="cancelled", cancelled_at=now)
        elif expire:
            batch.update(status="expired", expired_at=now)
        else:
            batch.update(status="completed", completed_at=now)


class _Ok:
    kind = "ok"


_OK = _Ok()
"""The fault a batch's answered request is read with (`FakeLLMServer._reply` reads only its kind)."""
