from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("probe", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="probejob",
            name="marks",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="probejob",
            name="work_plan",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
