from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0007_recommendation_engine_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="device",
            name="profile_history",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
