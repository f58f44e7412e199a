"""Trainer adapters: one small module per framework, each keeping one mcpgym episode per rollout
and handing the step reward to the trainer. Import the one you need; each imports its framework
itself, and nothing here imports any framework.

- `mcpgym.adapters.verl`: `McpgymTool`, a verl `BaseTool` (one episode per trajectory).
- `mcpgym.adapters.trl`: `environment_factory(...)`, the class `GRPOTrainer` takes.
- `mcpgym.adapters.skyrl`: `McpgymTextEnv`, a SkyRL `BaseTextEnv`; `register()`.
- `mcpgym.adapters.gem`: `McpgymGemEnv`, a GEM `Env`; `register(env_id, base_url, env)`.
- `mcpgym.adapters.rl_factory`: `McpgymEnv`, RL-Factory's `Env` interface, one episode per row.
- `mcpgym.adapters.qwen_agent`: `start_episode(...)`, Qwen-Agent tools bound to one episode.
"""

from mcpgym.adapters._toolcall import (
    ToolCall,
    ToolCallError,
    openai_function,
    parse_tool_calls,
    tools_prompt,
)

__all__ = ["ToolCall", "ToolCallError", "openai_function", "parse_tool_calls", "tools_prompt"]
