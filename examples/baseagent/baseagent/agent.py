"""The loop: ask the model, run the tools it calls, send back the results, until it calls `finish`.

Two ways of running it:
- command mode, the seed's default agent command `python -m baseagent --prompt <task> --workdir /repo`
  (the harness adds both arguments, and also names the prompt file in SWE_FORGE_PROMPT_FILE): its own
  tools on the working directory;
- gym mode, `python -m baseagent --gym <url> --task <task_id>` (token in BASEAGENT_GYM_TOKEN or
  SWE_FORGE_GYM_TOKEN): an environment of `swe-forge gym serve`, with the environment's tools
  (`baseagent.gym`); the reward, status and reason, the harness's result and the graded diff are printed
  as JSON on stdout.
Exit status: 0 when the model finished or stopped calling tools, 1 when the endpoint (or the gym)
failed for good, 2 on bad usage. The transcript goes to stderr, which the harness keeps as agent output.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from baseagent.gym import SYSTEM as GYM_SYSTEM
from baseagent.gym import TOKEN_VARS, GymError, GymSession, GymTools
from baseagent.llm import ChatClient, LLMError
from baseagent.tools import TOOLS, Finished, Toolbox

SYSTEM = """You are an expert software engineer. The repository at {workdir} has an issue to fix.
Investigate with the tools (shell, read_file), make the smallest change to the source code that
fixes the issue (edit_file, write_file), check it (e.g. run the relevant tests or a snippet), and
call finish. Do not modify existing tests to make them pass. You cannot reach the network."""


def read_prompt(args: argparse.Namespace) -> str | None:
    if args.prompt:
        return args.prompt
    path = args.prompt_file or os.environ.get("SWE_FORGE_PROMPT_FILE")
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    return None


def run(prompt: str, workdir: str, client: ChatClient, max_turns: int) -> int:
    return loop(prompt, client, max_turns, Toolbox(workdir), TOOLS, SYSTEM.format(workdir=workdir))


def loop(
    prompt: str, client: ChatClient, max_turns: int, toolbox: Any, tools: list[dict[str, Any]], system: str
) -> int:
    """Ask, run the called tools with `toolbox.call(name, arguments_json)`, send the results back; until `Finished`."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": prompt},
    ]
    for turn in range(1, max_turns + 1):
        try:
            message = client.complete(messages, tools)
        except LLMError as exc:
            print(f"baseagent: {exc}", file=sys.stderr)
            return 1
        calls = message.get("tool_calls") or []
        messages.append(
            {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
            if calls
            else {"role": "assistant", "content": message.get("content") or ""}
        )
        if not calls:
            print(f"[{turn}] the model stopped calling tools: {(message.get('content') or '')[:500]}", file=sys.stderr)
            return 0
        for call in calls:
            name = call.get("function", {}).get("name", "")
            arguments = call.get("function", {}).get("arguments") or "{}"
            print(f"[{turn}] {name} {arguments[:300]}", file=sys.stderr)
            try:
                result = toolbox.call(name, arguments)
            except Finished as done:
                print(f"[{turn}] finished: {done}", file=sys.stderr)
                return 0
            print(f"    -> {result[:300]}", file=sys.stderr)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": result})
    print(f"baseagent: stopped after {max_turns} turns", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="baseagent", description="An OpenAI-function-calling coding agent.")
    parser.add_argument("--prompt", help="the task statement (default: the file in SWE_FORGE_PROMPT_FILE)")
    parser.add_argument("--prompt-file", help="read the task statement from this file")
    parser.add_argument("--workdir", default=os.environ.get("SWE_FORGE_REPO_DIR") or os.getcwd())
    parser.add_argument("--max-turns", type=int, default=int(os.environ.get("BASEAGENT_MAX_TURNS") or 50))
    parser.add_argument("--gym", metavar="URL", help="drive an environment of `swe-forge gym serve` at URL")
    parser.add_argument("--task", help="gym mode: the task id to open")
    parser.add_argument("--agent-name", default="baseagent", help="gym mode: the agent's name in the episodes")
    args = parser.parse_args(argv)
    if args.gym:
        return run_gym(args)
    prompt = read_prompt(args)
    if not prompt:
        print("baseagent: no task statement (--prompt, --prompt-file or SWE_FORGE_PROMPT_FILE)", file=sys.stderr)
        return 2
    client = ChatClient.from_env()
    print(f"baseagent: model {client.model} at {client.base_url}, workdir {args.workdir}", file=sys.stderr)
    print(json.dumps({"prompt_chars": len(prompt)}), file=sys.stderr)
    return run(prompt, args.workdir, client, args.max_turns)


def run_gym(args: argparse.Namespace) -> int:
    """Gym mode: open an environment, loop with its tools, answer, print the reward and the harness's result
    (`{env_id, reward, status, reason, result, model_patch}`) as JSON on stdout."""
    token = next((os.environ[name] for name in TOKEN_VARS if os.environ.get(name)), "")
    if not args.task or not token:
        print(f"baseagent: --gym needs --task and a token in {' or '.join(TOKEN_VARS)}", file=sys.stderr)
        return 2
    session = GymSession(args.gym, token)
    try:
        env = session.open(args.task, args.agent_name)
    except GymError as exc:
        print(f"baseagent: cannot open {args.task}: {exc}", file=sys.stderr)
        return 1
    client = ChatClient.from_env()
    print(f"baseagent: model {client.model} at {client.base_url}, gym environment {env['env_id']}", file=sys.stderr)
    toolbox = GymTools(session, env["env_id"], Finished)
    try:
        status = loop(env["prompt"], client, args.max_turns, toolbox, env["tools"], GYM_SYSTEM)
        result = toolbox.conclude() if status == 0 else {}  # the model failed for good: no answer, just close
    except GymError as exc:
        print(f"baseagent: the gym failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if toolbox.result is None:
            with contextlib.suppress(GymError):
                session.close(env["env_id"])
    if status != 0:
        return status
    print(
        json.dumps(
            {
                "env_id": env["env_id"],
                "reward": result.get("reward"),
                "status": result.get("status"),
                "reason": result.get("reason"),
                "result": result.get("result"),
                "model_patch": result.get("model_patch"),
            }
        )
    )
    return status
