from django.db import migrations, models

from advisor.jsonenc import FastEncoder


class Migration(migrations.Migration):
    """The recommendation's JSON written by the fast encoder (advisor/jsonenc.py)."""

    dependencies = [("advisor", "0001_initial")]
    operations = [
        migrations.AlterField("recommendation", "result", models.JSONField(encoder=FastEncoder)),
        migrations.AlterField("recommendation", "spec", models.JSONField(encoder=FastEncoder)),
    ]
