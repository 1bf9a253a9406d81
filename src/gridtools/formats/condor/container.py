"""Container and docker jobs of a submit description: the attributes, transfers and
requirements HTCondor 24's condor_submit makes of ``container_image``,
``docker_image``, ``transfer_container`` and the ``container`` and ``docker``
universes (vanilla jobs with a "topping"), loaded only for a description that
names one of them.

- ``universe = docker`` needs ``docker_image`` (``DockerImage``,
  ``WantDocker``) and takes no ``container_image``; its requirements are
  ``TARGET.HasDocker`` in place of the operating system's term.
- ``universe = container``, or a vanilla (or local) job that names an image,
  is a container job (``WantContainer``): ``docker_image`` (``DockerImage``,
  ``WantDockerImage``) or ``container_image`` (``ContainerImage``, and
  ``WantDockerImage`` for a ``docker:`` image, ``WantSIF`` for one ending in
  ``.sif``, ``WantSandboxImage`` for anything else, a folder), not both; its
  requirements are ``TARGET.HasContainer`` and ``TARGET.HasDockerURL``,
  ``TARGET.HasSIF`` or ``TARGET.HasSandboxImage`` in place of the operating
  system's term. An image of a ``docker://`` or ``oras://`` URL is fetched by
  the execution point (``ContainerImageSource``); any other is one of the
  job's input files (``ContainerImageFullPath``; ``ContainerImage`` its last
  name; the source ``cedar``, or the URL's scheme), unless
  ``transfer_container`` is false (the source ``local``).
- The executable is optional: without one, ``Cmd`` is "" (the image's own).

This cell has no container runtime: its slot ads have none of ``HasContainer``,
``HasDocker`` and the rest, so such a job waits, and ``condor_q -analyze``
says why.
"""

import os

from gridtools.formats.condor.jobattrs import fail, unquoted

#: the commands that make a vanilla job a container job
COMMANDS = frozenset(("container_image", "docker_image"))
#: the universes that are vanilla with a topping
TOPPINGS = ("container", "docker")
#: images of these schemes are fetched where the job runs, never sent with it
_FETCHED = ("docker://", "oras://")
#: schemes HTCondor refuses for container_image
_REFUSED = ("instance://", "library://", "shub://")


def _given(cmd, key):
    value = cmd(key)
    return value.strip() if value is not None and value.strip() else None


def topping(ad, cmd, universe_name, universe):
    """Set the container attributes of a job of universe ``universe`` (named
    ``universe_name`` in the description); the job's topping: "docker", "container" or
    "" (a plain job). InputError in HTCondor's words for what it refuses."""
    from gridtools.formats.condor.jobattrs import LOCAL, VANILLA
    kind = universe_name if universe_name in TOPPINGS else ""
    if universe not in (VANILLA, LOCAL):
        return ""
    container, docker = _given(cmd, "container_image"), _given(cmd, "docker_image")
    if kind == "docker":
        if container:
            raise fail("docker universe does not allow use of container_image.")
    elif docker and container:
        raise fail("cannot declare both docker_image and container_image")
    elif docker or container:
        kind = "container"
        if docker:
            ad["WantDockerImage"] = True
    if kind == "docker":
        ad["WantDocker"] = True
        if not docker:
            raise fail("docker jobs require a docker_image")
        ad["DockerImage"] = unquoted(docker).strip()
    elif kind == "container":
        ad["WantContainer"] = True
        if docker:
            ad["DockerImage"] = unquoted(docker).strip()
        if container:
            # (the image is checked without double quotes around it, and kept with them,
            # as HTCondor 24 does)
            bare = unquoted(container).strip()
            if not bare or bare.startswith(_REFUSED):
                shown = container[:-1] if bare != container else container
                raise fail(f"'{shown}' is not a valid container image")
            ad["ContainerImage"] = container
            ad[_wanted(bare)] = True          # (the requirements read the image as kept)
        elif not docker:
            raise fail("container jobs require a container_image or docker_image")
    return kind


def _wanted(image):
    if image.startswith("docker:"):
        return "WantDockerImage"
    return "WantSIF" if image.endswith(".sif") else "WantSandboxImage"


def requirement_terms(ad, kind):
    """The terms that stand for the operating system's in the requirements of a job of
    topping ``kind``."""
    if kind == "docker":
        return ["TARGET.HasDocker"]
    if "DockerImage" in ad:
        return ["TARGET.HasContainer", "TARGET.HasDockerURL"]
    image = ad.eval("ContainerImage")
    return ["TARGET.HasContainer", _HAS[_wanted(image if isinstance(image, str) else "")]]


#: the machine attribute each kind of image asks for
_HAS = {"WantDockerImage": "TARGET.HasDockerURL", "WantSIF": "TARGET.HasSIF",
        "WantSandboxImage": "TARGET.HasSandboxImage"}


def transfer(ad, cmd, ctx, should):
    """The container image among the job's input files, where HTCondor sends it with the
    job (``ContainerImageSource``, ``ContainerImageFullPath``); its size counts in
    DiskUsage."""
    given = _given(cmd, "transfer_container")
    if given is not None:
        from gridtools.formats.condor.moreattrs import is_false
        if is_false(given):
            ad["ContainerImageSource"] = "local"
            return
    image = ad.eval("ContainerImage") if "ContainerImage" in ad else None
    if not isinstance(image, str):
        return
    for scheme in _FETCHED:
        if image.startswith(scheme):
            ad["ContainerImageSource"] = scheme[:-3]
            return
    trimmed = image[:-1] if image.endswith("/") else image
    ad["ContainerImage"] = os.path.basename(trimmed)
    ad["ContainerImageFullPath"] = image
    scheme, colon, _rest = trimmed.partition(":")
    ad["ContainerImageSource"] = scheme if colon else "cedar"
    if should == "NO":
        raise fail('you specified files you want Condor to transfer via "transfer_input_files", but you '
                   "disabled should_transfer_files.")
    listed = ad.eval("TransferInput") if "TransferInput" in ad else None
    ad["TransferInput"] = f"{listed},{image}" if isinstance(listed, str) and listed else image
    if ctx.files is not None:
        size = ctx.files.size_kib(os.path.join(ad.eval("Iwd"), image))
        if size:
            ad["DiskUsage"] = ad.eval("DiskUsage") + size
