class RequestException(IOError):
    """Something went wrong while handling a request."""


class HTTPError(RequestException):
    """The server answered with an error status."""
