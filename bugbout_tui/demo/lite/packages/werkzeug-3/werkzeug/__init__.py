"""The WSGI toolkit: requests, responses, routing and URL helpers."""
