"""Runs a Jupyter kernel that only speaks TCP behind the Unix sockets the service dials.

The sandbox service reaches kernels through socket files in the jail's run directory (the
jail shares no network with it). Deno's and R's kernels bind TCP ports only, so this relay,
the jail's first process, gives the kernel a TCP connection file on the jail's own loopback,
starts it, and forwards each connection made to a socket file to the matching port. It exits
with the kernel, so the service sees a dead kernel as a dead jail.

usage: python tcp_relay.py IPC_CONNECTION_FILE TCP_CONNECTION_FILE -- KERNEL ARGV...
(`{connection_file}` in the kernel's arguments becomes TCP_CONNECTION_FILE)
"""

import asyncio
import json
import os
import socket
import sys

CHANNELS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
# How long a connection waits for the kernel to listen: about the service's start timeout.
CONNECT_TRIES = 1200
CONNECT_PAUSE = 0.05


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now, on the jail's loopback."""
    sockets = []
    for _ in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


async def main() -> int:
    ipc_file, tcp_file = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1 :]
    with open(ipc_file) as file:
        info = json.load(file)
    tcp = dict(info, transport="tcp", ip="127.0.0.1")
    tcp.update(zip(CHANNELS, free_ports(len(CHANNELS)), strict=True))
    descriptor = os.open(tcp_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(tcp, file)
    kernel = await asyncio.create_subprocess_exec(
        *[arg.replace("{connection_file}", tcp_file) for arg in argv]
    )

    def handler(port: int):
        async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for _ in range(CONNECT_TRIES):
                try:
                    kernel_reader, kernel_writer = await asyncio.open_connection("127.0.0.1", port)
                    break
                except OSError:
                    if kernel.returncode is not None:
                        writer.close()
                        return
                    await asyncio.sleep(CONNECT_PAUSE)
            else:
                writer.close()
                return
            await asyncio.gather(pipe(reader, kernel_writer), pipe(kernel_reader, writer))

        return relay

    for channel in CHANNELS:
        await asyncio.start_unix_server(handler(tcp[channel]), f"{info['ip']}-{info[channel]}")
    return await kernel.wait()


if __name__ == "__main__":
    os._exit(asyncio.run(main()))
