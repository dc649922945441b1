"""The field's agents run on our tasks in their own loops (issue 40): each in an environment of its own."""
