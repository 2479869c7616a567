from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0005_fair_share_drain_forecasts_notifications"),
    ]

    operations = [
        migrations.AddField(
            model_name="timemodel",
            name="validation",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
