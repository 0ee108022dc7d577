"""What a session builds for the directory it works in: settings, resources, checkpoints, sandbox, tools.

Start-up builds them for the directory the run works in; switching to a session recorded in another
directory (``/resume``, RPC ``switch_session``, ``/import``) builds them again for that directory, as pi
0.87.1 does when it makes a new runtime for the session's cwd: the tools run there, its AGENTS.md and
project settings apply, and the footer and the prompt's ``cwd`` name it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.agent.tool import AgentTool
    from pi_tui.args import Args
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.packages.resolve import ResolvedPackages
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.sandbox import CommandSandbox
    from pi_tui.tools.image_resize import ResizeLimits

    from .agent_session import AgentSession

__all__ = ["CwdServices", "build_cwd_services", "move_args"]


@dataclass
class CwdServices:
    """Everything bound to one working directory (see the module docstring)."""

    cwd: Path
    settings: SettingsManager
    packages: ResolvedPackages
    resources: ResourceLoader
    checkpointer: Checkpointer
    sandbox: CommandSandbox
    tools: dict[str, AgentTool]
    """The built-in coding tools, working in ``cwd``."""


def move_args(args: Args) -> Args:
    """The command line as it applies to another directory than the start-up one: trust given for the
    start-up project (``--trust-project``, the trust question's answers) is not carried over to it;
    ``--approve`` / ``--no-approve`` from the command line are (pi's override holds for every runtime)."""
    approve = None if args.approve_here_only else args.approve
    return dataclasses.replace(args, trust_project=False, approve=approve, approve_here_only=False)


def build_cwd_services(
    args: Args,
    agent_dir: Path,
    cwd: Path,
    settings: SettingsManager,
    session_box: Sequence[AgentSession],
    warnings: list[str],
) -> CwdServices:
    """Build what works in ``cwd`` with ``settings`` (already loaded for it); problems go to ``warnings``.

    ``session_box`` holds the session once it exists (bash commands read its id and model; the sandbox
    asks through its UI).
    """
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.packages.resolve import resolve_packages
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.sandbox.session import make_sandbox
    from pi_tui.tools import create_coding_tools
    from pi_tui.tools.bash import agent_command_env

    # --- packages: installed packages; listed but missing ones are installed ---
    packages = resolve_packages(settings, offline=True if args.offline else None)
    warnings += packages.warnings
    # --- end packages ---
    resources = ResourceLoader(
        cwd,
        agent_dir,
        settings,
        no_skills=args.no_skills,
        skill_paths=args.skills,
        no_prompt_templates=args.no_prompt_templates,
        template_paths=args.prompt_templates,
        no_context_files=args.no_context_files,
        project_trusted=settings.is_project_trusted(cwd),
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
    )
    # --- packages: their skills and prompt templates load like explicit paths ---
    package_skills = [] if args.no_skills else packages.skill_paths
    package_prompts = [] if args.no_prompt_templates else packages.prompt_paths
    if package_skills or package_prompts:
        resources.extend_resources(skill_paths=package_skills, template_paths=package_prompts)
    # --- end packages ---
    warnings += resources.warnings

    # --- checkpoints: edit and write record their changes in the store ---
    checkpointer = Checkpointer.for_settings(cwd, settings, agent_dir)

    # bash commands see PI_SESSION_ID, PI_MODEL, ... (pi 0.82)
    def command_env() -> dict[str, str]:
        if not session_box:
            return {}
        current = session_box[0]
        return agent_command_env(
            session_id=current.session_manager.id,
            session_file=current.session_manager.path,
            provider=current.model.provider,
            model=current.model.id,
            reasoning_level=current.thinking,
        )

    # the read tool tells a model without image input that an image it read is left out (as pi)
    def model_takes_images() -> bool:
        return not session_box or "image" in session_box[0].model.input

    # images read are fitted into the current model's limits (its inputLimits.images.resize)
    def image_limits() -> ResizeLimits:
        from pi_tui.tools.image_process import DEFAULT_LIMITS, limits_for_model

        return limits_for_model(session_box[0].model.input_limits) if session_box else DEFAULT_LIMITS

    sandbox, escalate = make_sandbox(settings, cwd, agent_dir, args.sandbox, session_box)
    sandbox_notice = sandbox.startup_notice(
        probe=False
    )  # bwrap's own start is checked with the first command
    if sandbox_notice:
        warnings.append(sandbox_notice)
    tools = create_coding_tools(
        cwd,
        shell_path=settings.shell_path,
        command_prefix=settings.shell_command_prefix,
        on_file_change=checkpointer.record_file if checkpointer.enabled else None,
        command_env=command_env,
        sandbox=sandbox,
        escalate=escalate,
        model_takes_images=model_takes_images,
        auto_resize_images=settings.images.auto_resize,
        image_limits=image_limits,
    )
    return CwdServices(cwd, settings, packages, resources, checkpointer, sandbox, tools)
