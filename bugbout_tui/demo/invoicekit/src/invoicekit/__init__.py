"""invoicekit: invoices with exact amounts, due dates, numbering and plain-text rendering."""

__version__ = "0.4.0"
