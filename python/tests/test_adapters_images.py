"""Screenshots reach the policy through the text adapters (SkyRL, GEM, RL-Factory) in the form
each framework's multimodal path takes, not as the words "[1 image(s) attached below]"."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator

import gem
import pytest
import skyrl_gym
from PIL import Image

from mcpgym import Server
from mcpgym.adapters.gem import register as register_gem
from mcpgym.adapters.rl_factory import McpgymEnv
from mcpgym.adapters.skyrl import register as register_skyrl

SCREENSHOT = '<tool_call>{"name": "screenshot", "arguments": {}}</tool_call>'
GIVE_UP = '<tool_call>{"name": "terminate", "arguments": {"status": "failure"}}</tool_call>'


@pytest.fixture(scope="module")
def serve() -> Iterator[Server]:
    with Server("serve") as server:
        yield server


def test_skyrl_observation_carries_the_screenshot_as_an_image_part(serve: Server) -> None:
    register_skyrl("mcpgym-images")
    config = {"base_url": serve.url, "env": "desktop", "images": True}
    env = skyrl_gym.make("mcpgym-images", env_config=config, extras={"seed": 1})
    env.init([])
    out = env.step(SCREENSHOT)
    [message] = out["observations"]
    text, image = message["content"]
    assert text["type"] == "text"
    assert image["type"] == "image_url"
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    picture = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert picture.size[0] > 100
    # A text-only observation stays a string.
    out = env.step('<tool_call>{"name": "wait", "arguments": {"seconds": 0}}</tool_call>')
    assert all(isinstance(m["content"], str) for m in out["observations"])
    env.step(GIVE_UP)
    env.close()


def test_gem_observation_is_problem_and_images(serve: Server) -> None:
    register_gem("mcpgym:desktop-images", base_url=serve.url, env="desktop", images=True)
    env = gem.make("mcpgym:desktop-images")
    first, _info = env.reset(seed=1)
    assert isinstance(first["problem"], str) and first["images"] == []
    obs, _reward, terminated, _truncated, _info = env.step(SCREENSHOT)
    assert not terminated
    [picture] = obs["images"]
    assert isinstance(picture, Image.Image) and picture.size[0] > 100
    assert isinstance(obs["problem"], str)
    env.step(GIVE_UP)
    env.close()


def test_rl_factory_step_answers_mmenv_shape_with_the_image(serve: Server) -> None:
    env = McpgymEnv({"mcpgym": {"base_url": serve.url, "env": "desktop", "images": True}})
    env.start_batch([{"seed": 1}, {"seed": 2}])
    result = env.step([SCREENSHOT, "I am done."])
    assert len(result) == 8
    next_obs, dones, _valid, is_tool, new_image, raw_prompt, multi_modal_data, valid_tool = result
    assert dones == [False, True] and is_tool == [1, 0]
    assert isinstance(new_image[0], Image.Image) and new_image[1] is None
    assert valid_tool == [1, 0]
    assert raw_prompt == next_obs and multi_modal_data == [None, None]
    [[picture], []] = env.last_images()
    assert picture.size == new_image[0].size
    env.step([GIVE_UP])
    env.close()
