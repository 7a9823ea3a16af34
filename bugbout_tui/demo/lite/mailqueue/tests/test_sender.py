from mailqueue import SENDER, send_digest


def test_the_digest_goes_to_every_recipient_in_one_message(mocker):
    smtp = mocker.patch("smtplib.SMTP")
    assert send_digest("mail.example.org", ["a@example.org", "b@example.org"], "hello") == 2
    smtp.assert_called_once_with("mail.example.org", 25, timeout=10)
    (message,) = smtp.return_value.__enter__.return_value.send_message.call_args.args
    assert message["To"] == "a@example.org, b@example.org"
    assert message["From"] == SENDER


def test_nobody_to_send_to_opens_no_connection(mocker):
    smtp = mocker.patch("smtplib.SMTP")
    assert send_digest("mail.example.org", [], "hello") == 0
    smtp.assert_not_called()
