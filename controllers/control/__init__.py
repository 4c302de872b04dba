"""AI-control overseers: monitors (per-step suspicion), micro-protocols as controllers, and the
measures of a control evaluation (safety and usefulness at an audit budget)."""
