"""Send the digest in one SMTP session, to every recipient at once."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

SENDER = "digest@example.org"


def send_digest(host: str, recipients: list[str], body: str) -> int:
    """Send `body` to `recipients`; how many it went to. Nobody to send to sends nothing."""
    if not recipients:
        return 0
    message = EmailMessage()
    message["Subject"] = "Daily digest"
    message["From"] = SENDER
    message["To"] = ", ".join(recipients)
    message.set_content(body)
    with smtplib.SMTP(host, 25, timeout=10) as smtp:
        smtp.send_message(message)
    return len(recipients)
