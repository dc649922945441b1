"""From PR events to candidates: pre-filter rules, the processed-PR ledger, the local filter."""
